// qwen3_forward_bench.cpp: tokens per second of the CPU forward pass (native/model/qwen3_forward)
// on a random model with Qwen3-0.6B's shape (or a smaller one), weights in bf16 or fp8:
//   prefill: one sequence of P tokens, logits of the last one;
//   decode:  B sequences with C cached tokens each, one new token each, logits of all.
//
// Build (from the repository root, with the native/core, cpu and model objects):
//   g++ -std=c++17 -O3 -Inative bench/qwen3_forward_bench.cpp <objects> -lpthread -o qwen3_forward_bench
// Run: ./qwen3_forward_bench [0.6b|small] [BF16|F8_E4M3] [prefill|decode|both] [f32|bf16|fp8]
// (defaults: 0.6b, BF16, both, an f32 KV cache).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/qwen3_forward.h"

namespace {

using s3::DType;
using s3::model::Qwen3Config;

// Fills tensors fast (xorshift) with values of about N(0, scale²) magnitude; quality is irrelevant.
struct Filler {
  uint64_t state = 88172645463325252ull;
  float next(float scale) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return (float(state >> 40) / float(1 << 24) - 0.5f) * 3.4f * scale;
  }
};

struct BenchModel {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<s3::model::NamedTensor> tensors;

  void add(const std::string& name, std::vector<int64_t> shape, DType dtype, float scale, float mean, Filler& fill) {
    const size_t count = size_t(shape[0]) * size_t(shape.size() > 1 ? shape[1] : 1);
    storage.emplace_back(count * s3::dtype_size(dtype));
    uint8_t* bytes = storage.back().data();
    for (size_t i = 0; i < count; i++) {
      const float value = mean + fill.next(scale);
      if (dtype == DType::BF16) {
        const uint16_t bits = s3::f32_to_bf16(value);
        std::memcpy(bytes + 2 * i, &bits, 2);
      } else {
        bytes[i] = s3::f32_to_fp8e4m3(value * 448.0f / (2.0f * scale));
      }
    }
    tensors.push_back({name, dtype, shape, bytes});
    if (dtype == DType::F8_E4M3) {
      const int64_t rows = (shape[0] + 127) / 128, cols = (shape[1] + 127) / 128;
      storage.emplace_back(size_t(rows * cols) * 4);
      std::vector<float> scales(size_t(rows * cols), 2.0f * scale / 448.0f);
      std::memcpy(storage.back().data(), scales.data(), storage.back().size());
      tensors.push_back({name + "_scale_inv", DType::F32, {rows, cols}, storage.back().data()});
    }
  }
};

BenchModel make_model(const Qwen3Config& c, DType matrix_dtype) {
  BenchModel model;
  model.storage.reserve(size_t(c.num_hidden_layers) * 20 + 8);
  Filler fill;
  model.add("model.embed_tokens.weight", {c.vocab_size, c.hidden_size}, DType::BF16, 0.05f, 0.0f, fill);
  model.add("model.norm.weight", {c.hidden_size}, DType::BF16, 0.1f, 1.0f, fill);
  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const float in_scale = 1.0f / std::sqrt(float(c.hidden_size));
    model.add(p + "input_layernorm.weight", {c.hidden_size}, DType::BF16, 0.1f, 1.0f, fill);
    model.add(p + "post_attention_layernorm.weight", {c.hidden_size}, DType::BF16, 0.1f, 1.0f, fill);
    model.add(p + "self_attn.q_norm.weight", {c.head_dim}, DType::BF16, 0.1f, 1.0f, fill);
    model.add(p + "self_attn.k_norm.weight", {c.head_dim}, DType::BF16, 0.1f, 1.0f, fill);
    model.add(p + "self_attn.q_proj.weight", {c.q_dim(), c.hidden_size}, matrix_dtype, in_scale, 0.0f, fill);
    model.add(p + "self_attn.k_proj.weight", {c.kv_dim(), c.hidden_size}, matrix_dtype, in_scale, 0.0f, fill);
    model.add(p + "self_attn.v_proj.weight", {c.kv_dim(), c.hidden_size}, matrix_dtype, in_scale, 0.0f, fill);
    model.add(p + "self_attn.o_proj.weight", {c.hidden_size, c.q_dim()}, matrix_dtype,
              1.0f / std::sqrt(float(c.q_dim())), 0.0f, fill);
    model.add(p + "mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size}, matrix_dtype, in_scale, 0.0f, fill);
    model.add(p + "mlp.up_proj.weight", {c.intermediate_size, c.hidden_size}, matrix_dtype, in_scale, 0.0f, fill);
    model.add(p + "mlp.down_proj.weight", {c.hidden_size, c.intermediate_size}, matrix_dtype,
              1.0f / std::sqrt(float(c.intermediate_size)), 0.0f, fill);
  }
  return model;
}

Qwen3Config qwen3_0_6b() {
  Qwen3Config c;
  c.hidden_size = 1024, c.num_hidden_layers = 28, c.num_attention_heads = 16, c.num_key_value_heads = 8;
  c.head_dim = 128, c.intermediate_size = 3072, c.vocab_size = 151936, c.max_position_embeddings = 40960;
  c.rope_theta = 1e6f, c.rms_norm_eps = 1e-6f, c.tie_word_embeddings = true;
  return c;
}

Qwen3Config small() {
  Qwen3Config c = qwen3_0_6b();
  c.hidden_size = 256, c.num_hidden_layers = 4, c.num_attention_heads = 8, c.num_key_value_heads = 4;
  c.head_dim = 32, c.intermediate_size = 768, c.vocab_size = 4096;
  return c;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string shape = argc > 1 ? argv[1] : "0.6b";
  const DType dtype = argc > 2 && std::string(argv[2]) == "F8_E4M3" ? DType::F8_E4M3 : DType::BF16;
  const std::string only = argc > 3 ? argv[3] : "";
  const std::string kv_name = argc > 4 ? argv[4] : "f32";
  const s3::KvDtype kv_dtype = kv_name == "bf16" ? s3::KvDtype::Bf16 : kv_name == "fp8" ? s3::KvDtype::Fp8E4M3 : s3::KvDtype::F32;
  const Qwen3Config config = shape == "small" ? small() : qwen3_0_6b();
  const BenchModel model = make_model(config, dtype);
  const s3::model::Qwen3Weights weights =
      s3::model::Qwen3Weights::from_tensors(config, model.tensors, s3::model::Qwen3Weights::Storage::Borrow, "bench");
  s3::ThreadPool& pool = s3::default_thread_pool();
  std::printf("shape %s, weights %s, KV cache %s, threads %zu\n", shape.c_str(), s3::dtype_name(dtype), kv_name.c_str(),
              pool.num_threads());
  s3::model::Qwen3Workspace workspace;
  const int64_t V = config.vocab_size, block = 16;

  for (int64_t P : {128, 512}) {
    if (only == "decode") break;
    s3::model::KvCache cache(config, block, (P + block - 1) / block, kv_dtype);
    std::vector<int32_t> table(static_cast<size_t>((P + block - 1) / block)), tokens(static_cast<size_t>(P));
    for (size_t i = 0; i < table.size(); i++) table[i] = int32_t(i);
    for (size_t i = 0; i < tokens.size(); i++) tokens[i] = int32_t(i * 7919 % size_t(V));
    const s3::cpu::AttentionSequence seq{0, P, table.data(), int64_t(table.size())};
    const int64_t last = P - 1;
    std::vector<float> logits(static_cast<size_t>(V));
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
      const auto start = std::chrono::steady_clock::now();
      s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, &last, 1}, cache, workspace, logits.data(), pool);
      best = std::min(best, seconds_since(start));
    }
    std::printf("prefill P=%4lld: %8.1f ms  %8.1f tokens/s\n", (long long)P, best * 1e3, double(P) / best);
  }

  for (int64_t B : {1, 8, 64}) {
    if (only == "prefill") break;
    const int64_t context = 128, blocks_per_seq = (context + 1 + block - 1) / block;
    s3::model::KvCache cache(config, block, B * blocks_per_seq, kv_dtype);
    std::vector<int32_t> tables(size_t(B * blocks_per_seq));
    for (size_t i = 0; i < tables.size(); i++) tables[i] = int32_t(i);
    std::vector<s3::cpu::AttentionSequence> seqs;
    std::vector<int32_t> tokens(size_t(B), 11);
    std::vector<int64_t> rows(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; b++) {
      seqs.push_back({context, 1, &tables[size_t(b * blocks_per_seq)], blocks_per_seq});
      rows[size_t(b)] = b;
    }
    std::vector<float> logits(size_t(B * V));
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
      const auto start = std::chrono::steady_clock::now();
      const s3::model::Qwen3Batch batch{tokens.data(), seqs.data(), B, rows.data(), B};
      s3::model::qwen3_forward(weights, batch, cache, workspace, logits.data(), pool);
      best = std::min(best, seconds_since(start));
    }
    std::printf("decode  B=%4lld (context %lld): %8.1f ms/step  %8.1f tokens/s\n", (long long)B, (long long)context,
                best * 1e3, double(B) / best);
  }
}
