// qwen3_param_layout.h: the Qwen3 parameters as one flat f32 buffer, tensor by tensor under the
// checkpoint's names and in checkpoint order (embed, layers, norm, lm_head when untied), as the
// trainer holds its master weights and gradients; conversions from loaded weights and back to named
// tensors (for Qwen3Weights::from_tensors or write_safetensors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"

namespace s3::model {

struct Qwen3ParamLayout {
  struct Entry {
    std::string name;
    std::vector<int64_t> shape;
    size_t offset = 0;
    size_t count = 0;
  };
  struct Layer {
    size_t input_layernorm, q_proj, k_proj, v_proj, q_norm, k_norm, o_proj, post_attention_layernorm, gate_proj,
        up_proj, down_proj;
  };
  std::vector<Entry> entries;  // checkpoint order: embed, layers, norm, lm_head (untied only)
  std::vector<Layer> layers;
  size_t embed = 0, norm = 0, lm_head = 0;  // lm_head == embed when tied
  size_t total = 0;

  static Qwen3ParamLayout make(const Qwen3Config& config);
};

// The weights (any stored dtype) as f32 in the layout.
std::vector<float> qwen3_params_from_weights(const Qwen3Weights& weights, const Qwen3ParamLayout& layout);

// Borrowed NamedTensor views (F32) of a parameter buffer, for Qwen3Weights::from_tensors or
// write_safetensors.
std::vector<NamedTensor> qwen3_param_tensors(const Qwen3ParamLayout& layout, const float* params);

}  // namespace s3::model
