// Quantizing weights to FP8 with 128 × 128 block scales; see fp8_quantize.h.
#include "model/fp8_quantize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace s3::model {
namespace {

// Owned bytes of one tensor of the new checkpoint.
struct OwnedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// Quantizes w (any stored dtype, widened exactly to f32 first) into `name` and `name`_scale_inv.
void add_quantized(std::vector<OwnedTensor>& out, const std::string& name, const cpu::MatrixView& w) {
  std::vector<float> rows(size_t(w.rows * w.cols));
  for (int64_t n = 0; n < w.rows; n++) cpu::matrix_row_to_f32(w, n, &rows[size_t(n * w.cols)]);
  const int64_t scale_rows = (w.rows + cpu::kFp8BlockSize - 1) / cpu::kFp8BlockSize;
  OwnedTensor bytes{name, DType::F8_E4M3, {w.rows, w.cols}, std::vector<uint8_t>(size_t(w.rows * w.cols))};
  OwnedTensor scales{name + "_scale_inv", DType::F32, {scale_rows, w.scale_cols()},
                     std::vector<uint8_t>(size_t(scale_rows * w.scale_cols() * 4))};
  quantize_fp8_blockwise(rows.data(), w.rows, w.cols, bytes.bytes.data(), reinterpret_cast<float*>(scales.bytes.data()));
  out.push_back(std::move(bytes));
  out.push_back(std::move(scales));
}

// Keeps w exactly as stored: its bytes in its dtype, and an FP8 weight's block scales.
void add_stored(std::vector<OwnedTensor>& out, const std::string& name, const cpu::MatrixView& w) {
  OwnedTensor bytes{name, w.dtype, {w.rows, w.cols}, std::vector<uint8_t>(size_t(w.rows * w.cols) * dtype_size(w.dtype))};
  std::copy_n(static_cast<const uint8_t*>(w.data), bytes.bytes.size(), bytes.bytes.data());
  out.push_back(std::move(bytes));
  if (w.dtype != DType::F8_E4M3) return;
  const int64_t scale_rows = (w.rows + cpu::kFp8BlockSize - 1) / cpu::kFp8BlockSize;
  OwnedTensor scales{name + "_scale_inv", DType::F32, {scale_rows, w.scale_cols()},
                     std::vector<uint8_t>(size_t(scale_rows * w.scale_cols() * 4))};
  std::copy_n(reinterpret_cast<const uint8_t*>(w.block_scales), scales.bytes.size(), scales.bytes.data());
  out.push_back(std::move(scales));
}

void add_vector(std::vector<OwnedTensor>& out, const std::string& name, const float* values, int64_t size) {
  OwnedTensor t{name, DType::F32, {size}, std::vector<uint8_t>(size_t(size * 4))};
  std::copy_n(reinterpret_cast<const uint8_t*>(values), t.bytes.size(), t.bytes.data());
  out.push_back(std::move(t));
}

}  // namespace

void quantize_fp8_blockwise(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales) {
  const int64_t B = cpu::kFp8BlockSize, scale_cols = (cols + B - 1) / B;
  for (int64_t rb = 0; rb * B < rows; rb++) {
    for (int64_t cb = 0; cb * B < cols; cb++) {
      const int64_t r_end = std::min(rows, (rb + 1) * B), c_end = std::min(cols, (cb + 1) * B);
      float max_abs = 0.0f;
      for (int64_t r = rb * B; r < r_end; r++) {
        for (int64_t c = cb * B; c < c_end; c++) max_abs = std::max(max_abs, std::fabs(w[r * cols + c]));
      }
      const float scale = max_abs > 0.0f ? max_abs / kFp8E4M3Max : 1.0f;
      scales[rb * scale_cols + cb] = scale;
      for (int64_t r = rb * B; r < r_end; r++) {
        for (int64_t c = cb * B; c < c_end; c++) bytes[r * cols + c] = f32_to_fp8e4m3(w[r * cols + c] / scale);
      }
    }
  }
}

Qwen3Weights quantize_weights_fp8(const Qwen3Weights& weights) {
  const Qwen3Config& c = weights.config();
  std::vector<OwnedTensor> tensors;
  auto linear = [&](const std::string& name, const cpu::MatrixView& w) {
    if (w.dtype == DType::F8_E4M3) {
      add_stored(tensors, name, w);
    } else {
      add_quantized(tensors, name, w);
    }
  };
  add_stored(tensors, "model.embed_tokens.weight", weights.embed_tokens());
  if (!c.tie_word_embeddings) add_stored(tensors, "lm_head.weight", weights.lm_head());
  add_vector(tensors, "model.norm.weight", weights.norm(), c.hidden_size);
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    const Qwen3LayerWeights& layer = weights.layers()[size_t(i)];
    add_vector(tensors, prefix + "input_layernorm.weight", layer.input_layernorm, c.hidden_size);
    add_vector(tensors, prefix + "post_attention_layernorm.weight", layer.post_attention_layernorm, c.hidden_size);
    add_vector(tensors, prefix + "self_attn.q_norm.weight", layer.q_norm, c.head_dim);
    add_vector(tensors, prefix + "self_attn.k_norm.weight", layer.k_norm, c.head_dim);
    linear(prefix + "self_attn.q_proj.weight", layer.q_proj);
    linear(prefix + "self_attn.k_proj.weight", layer.k_proj);
    linear(prefix + "self_attn.v_proj.weight", layer.v_proj);
    linear(prefix + "self_attn.o_proj.weight", layer.o_proj);
    linear(prefix + "mlp.gate_proj.weight", layer.gate_proj);
    linear(prefix + "mlp.up_proj.weight", layer.up_proj);
    linear(prefix + "mlp.down_proj.weight", layer.down_proj);
  }
  std::vector<NamedTensor> named;
  for (const OwnedTensor& t : tensors) named.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  Qwen3Config config = c;
  config.fp8_blockwise = true;
  return Qwen3Weights::from_tensors(config, named, Qwen3Weights::Storage::Copy, "the FP8-quantized weights");
}

}  // namespace s3::model
