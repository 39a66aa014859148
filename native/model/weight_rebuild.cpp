// Rebuilding a model tensor by tensor; see weight_rebuild.h.
#include "model/weight_rebuild.h"

#include <algorithm>

namespace s3::model {

void add_stored_matrix(std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w) {
  RebuiltTensor bytes{name, w.dtype, {w.rows, w.cols}, std::vector<uint8_t>(size_t(w.rows * w.cols) * dtype_size(w.dtype))};
  std::copy_n(static_cast<const uint8_t*>(w.data), bytes.bytes.size(), bytes.bytes.data());
  out.push_back(std::move(bytes));
  if (w.dtype != DType::F8_E4M3) return;
  const int64_t scale_rows = (w.rows + cpu::kFp8BlockSize - 1) / cpu::kFp8BlockSize;
  RebuiltTensor scales{name + "_scale_inv", DType::F32, {scale_rows, w.scale_cols()},
                       std::vector<uint8_t>(size_t(scale_rows * w.scale_cols()) * sizeof(float))};
  std::copy_n(reinterpret_cast<const uint8_t*>(w.block_scales), scales.bytes.size(), scales.bytes.data());
  out.push_back(std::move(scales));
}

std::vector<RebuiltTensor> rebuild_tensors(const Qwen3Weights& weights, const WeightRebuild& rebuild) {
  const Qwen3Config& c = weights.config();
  std::vector<RebuiltTensor> tensors;
  auto vector = [&](const std::string& name, const float* values, int64_t size) {
    RebuiltTensor t{name, DType::F32, {size}, std::vector<uint8_t>(size_t(size) * sizeof(float))};
    float* out = reinterpret_cast<float*>(t.bytes.data());
    for (int64_t i = 0; i < size; i++) out[i] = rebuild.vector_value ? rebuild.vector_value(values[i]) : values[i];
    tensors.push_back(std::move(t));
  };
  rebuild.matrix(tensors, "model.embed_tokens.weight", weights.embed_tokens(), MatrixRole::Embedding);
  if (!c.tie_word_embeddings) rebuild.matrix(tensors, "lm_head.weight", weights.lm_head(), MatrixRole::LmHead);
  vector("model.norm.weight", weights.norm(), c.hidden_size);
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    const Qwen3LayerWeights& layer = weights.layers()[size_t(i)];
    vector(prefix + "input_layernorm.weight", layer.input_layernorm, c.hidden_size);
    vector(prefix + "post_attention_layernorm.weight", layer.post_attention_layernorm, c.hidden_size);
    vector(prefix + "self_attn.q_norm.weight", layer.q_norm, c.head_dim);
    vector(prefix + "self_attn.k_norm.weight", layer.k_norm, c.head_dim);
    const std::pair<const char*, const cpu::MatrixView*> linears[] = {
        {"self_attn.q_proj.weight", &layer.q_proj}, {"self_attn.k_proj.weight", &layer.k_proj},
        {"self_attn.v_proj.weight", &layer.v_proj}, {"self_attn.o_proj.weight", &layer.o_proj},
        {"mlp.gate_proj.weight", &layer.gate_proj}, {"mlp.up_proj.weight", &layer.up_proj},
        {"mlp.down_proj.weight", &layer.down_proj},
    };
    for (const auto& [name, w] : linears) rebuild.matrix(tensors, prefix + name, *w, MatrixRole::Linear);
  }
  return tensors;
}

Qwen3Weights rebuild_weights(const Qwen3Weights& weights, const WeightRebuild& rebuild) {
  const std::vector<RebuiltTensor> tensors = rebuild_tensors(weights, rebuild);
  std::vector<NamedTensor> named;
  named.reserve(tensors.size());
  for (const RebuiltTensor& t : tensors) named.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  Qwen3Config config = weights.config();
  config.fp8_blockwise = rebuild.fp8_blockwise;
  return Qwen3Weights::from_tensors(config, named, Qwen3Weights::Storage::Copy, rebuild.source);
}

}  // namespace s3::model
