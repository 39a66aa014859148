// The flat parameter layout; see qwen3_param_layout.h.
#include "model/qwen3_param_layout.h"

#include <algorithm>
#include <stdexcept>

#include "core/huge_pages.h"
#include "cpu/matrix_view.h"

namespace s3::model {

Qwen3ParamLayout Qwen3ParamLayout::make(const Qwen3Config& c) {
  Qwen3ParamLayout layout;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    size_t count = 1;
    for (int64_t d : shape) count *= size_t(d);
    layout.entries.push_back({name, std::move(shape), layout.total, count});
    layout.total += count;
    return layout.entries.back().offset;
  };
  const int64_t C = c.hidden_size, I = c.intermediate_size;
  layout.embed = add("model.embed_tokens.weight", {c.vocab_size, C});
  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    Layer L{};
    L.input_layernorm = add(p + "input_layernorm.weight", {C});
    L.q_proj = add(p + "self_attn.q_proj.weight", {c.q_dim(), C});
    L.k_proj = add(p + "self_attn.k_proj.weight", {c.kv_dim(), C});
    L.v_proj = add(p + "self_attn.v_proj.weight", {c.kv_dim(), C});
    L.q_norm = add(p + "self_attn.q_norm.weight", {c.head_dim});
    L.k_norm = add(p + "self_attn.k_norm.weight", {c.head_dim});
    L.o_proj = add(p + "self_attn.o_proj.weight", {C, c.q_dim()});
    L.post_attention_layernorm = add(p + "post_attention_layernorm.weight", {C});
    L.gate_proj = add(p + "mlp.gate_proj.weight", {I, C});
    L.up_proj = add(p + "mlp.up_proj.weight", {I, C});
    L.down_proj = add(p + "mlp.down_proj.weight", {C, I});
    layout.layers.push_back(L);
  }
  layout.norm = add("model.norm.weight", {C});
  layout.lm_head = c.tie_word_embeddings ? layout.embed : add("lm_head.weight", {c.vocab_size, C});
  return layout;
}

std::vector<float> qwen3_params_from_weights(const Qwen3Weights& weights, const Qwen3ParamLayout& layout) {
  const Qwen3Config& c = weights.config();
  std::vector<float> params;
  assign_on_huge_pages(params, layout.total, 0.0f);  // the trainer's master weights: gigabytes
  auto matrix = [&](const cpu::MatrixView& view, size_t offset) {
    for (int64_t r = 0; r < view.rows; r++) cpu::matrix_row_to_f32(view, r, params.data() + offset + size_t(r * view.cols));
  };
  auto vector = [&](const float* src, size_t offset, int64_t n) {
    std::memcpy(params.data() + offset, src, size_t(n) * sizeof(float));
  };
  matrix(weights.embed_tokens(), layout.embed);
  for (size_t l = 0; l < layout.layers.size(); l++) {
    const Qwen3LayerWeights& w = weights.layers()[l];
    const Qwen3ParamLayout::Layer& L = layout.layers[l];
    vector(w.input_layernorm, L.input_layernorm, c.hidden_size);
    matrix(w.q_proj, L.q_proj);
    matrix(w.k_proj, L.k_proj);
    matrix(w.v_proj, L.v_proj);
    vector(w.q_norm, L.q_norm, c.head_dim);
    vector(w.k_norm, L.k_norm, c.head_dim);
    matrix(w.o_proj, L.o_proj);
    vector(w.post_attention_layernorm, L.post_attention_layernorm, c.hidden_size);
    matrix(w.gate_proj, L.gate_proj);
    matrix(w.up_proj, L.up_proj);
    matrix(w.down_proj, L.down_proj);
  }
  vector(weights.norm(), layout.norm, c.hidden_size);
  if (!c.tie_word_embeddings) matrix(weights.lm_head(), layout.lm_head);
  return params;
}

std::vector<NamedTensor> qwen3_param_tensors(const Qwen3ParamLayout& layout, const float* params) {
  std::vector<NamedTensor> tensors;
  for (const auto& e : layout.entries) tensors.push_back({e.name, DType::F32, e.shape, params + e.offset});
  return tensors;
}

}  // namespace s3::model
