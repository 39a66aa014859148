// naive_qwen3.h: test support for the Qwen3 CPU path. Random Qwen3 models built in memory (in
// any weight dtype, FP8 blockwise included), and a naive reference forward pass written
// independently of native/model and native/cpu: plain loops in double precision, full causal
// softmax, straight from SPEC §10. The fast path is checked against it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"

namespace s3test {

// The config.json of `c` (f32), as a checkpoint folder or Trainer::save holds it.
inline std::string qwen3_config_json(const s3::model::Qwen3Config& c) {
  return "{\"architectures\": [\"Qwen3ForCausalLM\"], \"model_type\": \"qwen3\", \"hidden_act\": \"silu\", "
         "\"hidden_size\": " + std::to_string(c.hidden_size) + ", \"num_hidden_layers\": " +
         std::to_string(c.num_hidden_layers) + ", \"num_attention_heads\": " + std::to_string(c.num_attention_heads) +
         ", \"num_key_value_heads\": " + std::to_string(c.num_key_value_heads) + ", \"head_dim\": " +
         std::to_string(c.head_dim) + ", \"intermediate_size\": " + std::to_string(c.intermediate_size) +
         ", \"vocab_size\": " + std::to_string(c.vocab_size) + ", \"max_position_embeddings\": " +
         std::to_string(c.max_position_embeddings) + ", \"rope_theta\": 1000000.0, \"rms_norm_eps\": 1e-06, " +
         "\"tie_word_embeddings\": " + (c.tie_word_embeddings ? "true" : "false") + ", \"torch_dtype\": \"float32\"}";
}

// hidden 64, 2 layers, 4 heads / 2 KV heads, head_dim 16, MLP 128, vocab 512, tied.
inline s3::model::Qwen3Config tiny_qwen3_config() {
  s3::model::Qwen3Config c;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.vocab_size = 512;
  c.max_position_embeddings = 4096;
  c.rope_theta = 1e6f;
  c.rms_norm_eps = 1e-6f;
  c.tie_word_embeddings = true;
  return c;
}

// hidden 256, 4 layers, 8 heads / 4 KV heads, head_dim 32, MLP 768, vocab 4096, tied.
inline s3::model::Qwen3Config small_qwen3_config() {
  s3::model::Qwen3Config c = tiny_qwen3_config();
  c.hidden_size = 256;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 4;
  c.head_dim = 32;
  c.intermediate_size = 768;
  c.vocab_size = 4096;
  return c;
}

// Qwen3-0.6B's shape (SPEC §10) with `layers` of its 28 layers, tied.
inline s3::model::Qwen3Config qwen3_06b_config(int64_t layers) {
  s3::model::Qwen3Config c = tiny_qwen3_config();
  c.hidden_size = 1024;
  c.num_hidden_layers = layers;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 8;
  c.head_dim = 128;
  c.intermediate_size = 3072;
  c.vocab_size = 151936;
  c.max_position_embeddings = 40960;
  return c;
}

struct TestTensor {
  std::string name;
  s3::DType dtype = s3::DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct TestModel {
  s3::model::Qwen3Config config;
  std::vector<TestTensor> tensors;

  std::vector<s3::model::NamedTensor> named() const {
    std::vector<s3::model::NamedTensor> views;
    for (const TestTensor& t : tensors) views.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
    return views;
  }

  const TestTensor& tensor(const std::string& name) const {
    for (const TestTensor& t : tensors) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("test model has no tensor " + name);
  }
  TestTensor& tensor(const std::string& name) { return const_cast<TestTensor&>(std::as_const(*this).tensor(name)); }

  // The tensor's values as double: the exact stored values, FP8 dequantized by its block scales.
  std::vector<double> values(const std::string& name) const {
    const TestTensor& t = tensor(name);
    size_t count = 1;
    for (int64_t d : t.shape) count *= size_t(d);
    std::vector<double> out(count);
    for (size_t i = 0; i < count; i++) {
      uint16_t half;
      float single;
      switch (t.dtype) {
        case s3::DType::BF16:
          std::memcpy(&half, &t.bytes[2 * i], 2);
          out[i] = s3::bf16_to_f32(half);
          break;
        case s3::DType::F16:
          std::memcpy(&half, &t.bytes[2 * i], 2);
          out[i] = s3::f16_to_f32(half);
          break;
        case s3::DType::F8_E4M3: {
          const TestTensor& scales = tensor(name + "_scale_inv");
          const size_t cols = size_t(t.shape[1]), row = i / cols, col = i % cols;
          std::memcpy(&single, &scales.bytes[4 * ((row / 128) * size_t(scales.shape[1]) + col / 128)], 4);
          out[i] = double(s3::fp8e4m3_to_f32(t.bytes[i])) * double(single);
          break;
        }
        default:
          std::memcpy(&single, &t.bytes[4 * i], 4);
          out[i] = single;
          break;
      }
    }
    return out;
  }
};

// Stores f32 values in `dtype`; FP8 gets one scale per 128 × 128 block (amax / 448) beside it.
inline void add_test_tensor(TestModel& model, const std::string& name, std::vector<int64_t> shape,
                            const std::vector<float>& values, s3::DType dtype) {
  TestTensor t{name, dtype, shape, std::vector<uint8_t>(values.size() * s3::dtype_size(dtype))};
  if (dtype == s3::DType::F8_E4M3) {
    const int64_t rows = shape[0], cols = shape[1], block_rows = (rows + 127) / 128, block_cols = (cols + 127) / 128;
    std::vector<float> scales(size_t(block_rows * block_cols), 0.0f);
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t c = 0; c < cols; c++) {
        float& scale = scales[size_t((r / 128) * block_cols + c / 128)];
        scale = std::max(scale, std::fabs(values[size_t(r * cols + c)]) / s3::kFp8E4M3Max);
      }
    }
    for (float& scale : scales) scale = scale > 0.0f ? scale : 1.0f;
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t c = 0; c < cols; c++) {
        const float scale = scales[size_t((r / 128) * block_cols + c / 128)];
        t.bytes[size_t(r * cols + c)] = s3::f32_to_fp8e4m3(values[size_t(r * cols + c)] / scale);
      }
    }
    TestTensor s{name + "_scale_inv", s3::DType::F32, {block_rows, block_cols},
                 std::vector<uint8_t>(scales.size() * 4)};
    std::memcpy(s.bytes.data(), scales.data(), s.bytes.size());
    model.tensors.push_back(std::move(t));
    model.tensors.push_back(std::move(s));
    return;
  }
  for (size_t i = 0; i < values.size(); i++) {
    if (dtype == s3::DType::F32) std::memcpy(&t.bytes[4 * i], &values[i], 4);
    const uint16_t half = dtype == s3::DType::BF16 ? s3::f32_to_bf16(values[i]) : s3::f32_to_f16(values[i]);
    if (dtype != s3::DType::F32) std::memcpy(&t.bytes[2 * i], &half, 2);
  }
  model.tensors.push_back(std::move(t));
}

// A random model: linear weights N(0, 1/in) in `matrix_dtype`, embeddings N(0, 1) and norm
// weights 1 + N(0, 0.1²) in `vector_dtype`. lm_head.weight is added when the config is untied
// (or when with_lm_head forces it, as Qwen3-0.6B's tied file carries one).
inline TestModel make_test_model(const s3::model::Qwen3Config& config, s3::DType matrix_dtype, uint64_t seed,
                                 s3::DType vector_dtype = s3::DType::BF16, bool with_lm_head = false) {
  TestModel model{config, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random = [&](size_t count, float mean, float stddev) {
    std::vector<float> values(count);
    for (float& v : values) v = mean + stddev * normal(rng);
    return values;
  };
  const s3::model::Qwen3Config& c = config;
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    add_test_tensor(model, name, {out, in}, random(size_t(out * in), 0.0f, 1.0f / std::sqrt(float(in))), matrix_dtype);
  };
  auto norm = [&](const std::string& name, int64_t size) {
    add_test_tensor(model, name, {size}, random(size_t(size), 1.0f, 0.1f), vector_dtype);
  };
  add_test_tensor(model, "model.embed_tokens.weight", {c.vocab_size, c.hidden_size},
                  random(size_t(c.vocab_size * c.hidden_size), 0.0f, 1.0f), vector_dtype);
  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    norm(p + "input_layernorm.weight", c.hidden_size);
    linear(p + "self_attn.q_proj.weight", c.q_dim(), c.hidden_size);
    linear(p + "self_attn.k_proj.weight", c.kv_dim(), c.hidden_size);
    linear(p + "self_attn.v_proj.weight", c.kv_dim(), c.hidden_size);
    norm(p + "self_attn.q_norm.weight", c.head_dim);
    norm(p + "self_attn.k_norm.weight", c.head_dim);
    linear(p + "self_attn.o_proj.weight", c.hidden_size, c.q_dim());
    norm(p + "post_attention_layernorm.weight", c.hidden_size);
    linear(p + "mlp.gate_proj.weight", c.intermediate_size, c.hidden_size);
    linear(p + "mlp.up_proj.weight", c.intermediate_size, c.hidden_size);
    linear(p + "mlp.down_proj.weight", c.hidden_size, c.intermediate_size);
  }
  norm("model.norm.weight", c.hidden_size);
  if (!c.tie_word_embeddings || with_lm_head) {
    const float scale = 1.0f / std::sqrt(float(c.hidden_size));
    add_test_tensor(model, "lm_head.weight", {c.vocab_size, c.hidden_size},
                    random(size_t(c.vocab_size * c.hidden_size), 0.0f, scale), vector_dtype);
  }
  return model;
}

namespace naive {

// y[n] = Σ_k w[n][k] x[k] for w [N × K]; with round_input, x is first rounded to f32 and then to
// BF16 (RNE), as the avx512bf16 matmul rounds its input for BF16 and FP8 weights.
inline std::vector<double> linear(const std::vector<double>& w, const std::vector<double>& x, size_t N,
                                  bool round_input = false) {
  const size_t K = x.size();
  std::vector<double> xr(x);
  if (round_input) {
    for (double& v : xr) v = double(s3::bf16_to_f32(s3::f32_to_bf16(float(v))));
  }
  std::vector<double> y(N, 0.0);
  for (size_t n = 0; n < N; n++) {
    for (size_t k = 0; k < K; k++) y[n] += w[n * K + k] * xr[k];
  }
  return y;
}

// RMSNorm over consecutive groups of `size` values, weight shared by the groups.
inline std::vector<double> rmsnorm(const std::vector<double>& x, const std::vector<double>& weight, double eps) {
  const size_t size = weight.size();
  std::vector<double> y(x.size());
  for (size_t g = 0; g < x.size(); g += size) {
    double mean_square = 0.0;
    for (size_t i = 0; i < size; i++) mean_square += x[g + i] * x[g + i];
    mean_square /= double(size);
    for (size_t i = 0; i < size; i++) y[g + i] = weight[i] * x[g + i] / std::sqrt(mean_square + eps);
  }
  return y;
}

// Rotate-half RoPE on each head_dim group: dimension j pairs with j + head_dim/2.
inline void rope(std::vector<double>& x, size_t head_dim, int64_t position, double theta) {
  const size_t half = head_dim / 2;
  for (size_t g = 0; g < x.size(); g += head_dim) {
    for (size_t j = 0; j < half; j++) {
      const double angle = double(position) * std::pow(theta, -2.0 * double(j) / double(head_dim));
      const double a = x[g + j], b = x[g + j + half];
      x[g + j] = a * std::cos(angle) - b * std::sin(angle);
      x[g + j + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  }
}

}  // namespace naive

// Logits [T][V] of every position of one sequence, computed from scratch; token t sits at rotary
// position position_offset + t (Hugging Face's position_ids). bf16_matmul_inputs: the linear
// layers whose weights are BF16 or FP8 round their input to BF16 first, the numerics of the
// avx512bf16 matmul (MatmulKernels::rounds_input_to_bf16).
inline std::vector<std::vector<double>> naive_qwen3_logits(const TestModel& model, const std::vector<int32_t>& tokens,
                                                           int64_t position_offset = 0, bool bf16_matmul_inputs = false) {
  const s3::model::Qwen3Config& c = model.config;
  const size_t T = tokens.size(), C = size_t(c.hidden_size), NH = size_t(c.num_attention_heads);
  const size_t NKV = size_t(c.num_key_value_heads), HD = size_t(c.head_dim), I = size_t(c.intermediate_size);
  const double eps = c.rms_norm_eps;
  const std::vector<double> embed = model.values("model.embed_tokens.weight");
  const auto rounds = [&](const std::string& name) {
    const s3::DType dtype = model.tensor(name).dtype;
    return bf16_matmul_inputs && (dtype == s3::DType::BF16 || dtype == s3::DType::F8_E4M3);
  };
  std::vector<std::vector<double>> x(T);
  for (size_t t = 0; t < T; t++) {
    const double* row = embed.data() + size_t(tokens[t]) * C;
    x[t].assign(row, row + C);
  }

  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto w = [&](const std::string& name) { return model.values(p + name); };
    const std::vector<double> wq = w("self_attn.q_proj.weight"), wk = w("self_attn.k_proj.weight");
    const std::vector<double> wv = w("self_attn.v_proj.weight"), wo = w("self_attn.o_proj.weight");
    const std::vector<double> q_norm = w("self_attn.q_norm.weight"), k_norm = w("self_attn.k_norm.weight");
    const bool round_q = rounds(p + "self_attn.q_proj.weight"), round_k = rounds(p + "self_attn.k_proj.weight");
    const bool round_v = rounds(p + "self_attn.v_proj.weight"), round_o = rounds(p + "self_attn.o_proj.weight");
    std::vector<std::vector<double>> q(T), k(T), v(T);
    for (size_t t = 0; t < T; t++) {
      const std::vector<double> h = naive::rmsnorm(x[t], w("input_layernorm.weight"), eps);
      q[t] = naive::rmsnorm(naive::linear(wq, h, NH * HD, round_q), q_norm, eps);
      k[t] = naive::rmsnorm(naive::linear(wk, h, NKV * HD, round_k), k_norm, eps);
      v[t] = naive::linear(wv, h, NKV * HD, round_v);
      naive::rope(q[t], HD, position_offset + int64_t(t), c.rope_theta);
      naive::rope(k[t], HD, position_offset + int64_t(t), c.rope_theta);
    }
    for (size_t t = 0; t < T; t++) {
      std::vector<double> attn(NH * HD, 0.0);
      for (size_t h = 0; h < NH; h++) {
        const size_t g = h / (NH / NKV);
        std::vector<double> score(t + 1);
        double max = -INFINITY, total = 0.0;
        for (size_t s = 0; s <= t; s++) {
          score[s] = 0.0;
          for (size_t d = 0; d < HD; d++) score[s] += q[t][h * HD + d] * k[s][g * HD + d];
          score[s] /= std::sqrt(double(HD));
          max = std::max(max, score[s]);
        }
        for (size_t s = 0; s <= t; s++) total += std::exp(score[s] - max);
        for (size_t s = 0; s <= t; s++) {
          const double p = std::exp(score[s] - max) / total;
          for (size_t d = 0; d < HD; d++) attn[h * HD + d] += p * v[s][g * HD + d];
        }
      }
      const std::vector<double> o = naive::linear(wo, attn, C, round_o);
      for (size_t i = 0; i < C; i++) x[t][i] += o[i];
    }
    const std::vector<double> wg = w("mlp.gate_proj.weight"), wu = w("mlp.up_proj.weight");
    const std::vector<double> wd = w("mlp.down_proj.weight");
    for (size_t t = 0; t < T; t++) {
      const std::vector<double> h = naive::rmsnorm(x[t], w("post_attention_layernorm.weight"), eps);
      std::vector<double> gate = naive::linear(wg, h, I, rounds(p + "mlp.gate_proj.weight"));
      const std::vector<double> up = naive::linear(wu, h, I, rounds(p + "mlp.up_proj.weight"));
      for (size_t i = 0; i < I; i++) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const std::vector<double> down = naive::linear(wd, gate, C, rounds(p + "mlp.down_proj.weight"));
      for (size_t i = 0; i < C; i++) x[t][i] += down[i];
    }
  }
  const std::string head_name = c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  const std::vector<double> head = model.values(head_name);
  std::vector<std::vector<double>> logits(T);
  for (size_t t = 0; t < T; t++) {
    logits[t] = naive::linear(head, naive::rmsnorm(x[t], model.values("model.norm.weight"), eps), size_t(c.vocab_size),
                              rounds(head_name));
  }
  return logits;
}

}  // namespace s3test
