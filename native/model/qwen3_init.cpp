// Random Qwen3 checkpoints; see qwen3_init.h.
#include "model/qwen3_init.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/philox.h"
#include "core/safetensors.h"
#include "core/thread_pool.h"
#include "model/qwen3_config.h"

namespace s3::model {
namespace {

struct TensorPlan {
  std::string name;
  std::vector<int64_t> shape;
  bool is_norm;  // RMSNorm weights start at 1
};

std::vector<TensorPlan> plan_tensors(const Qwen3Config& c) {
  std::vector<TensorPlan> plan;
  plan.push_back({"model.embed_tokens.weight", {c.vocab_size, c.hidden_size}, false});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    plan.push_back({p + "input_layernorm.weight", {c.hidden_size}, true});
    plan.push_back({p + "self_attn.q_proj.weight", {c.q_dim(), c.hidden_size}, false});
    plan.push_back({p + "self_attn.k_proj.weight", {c.kv_dim(), c.hidden_size}, false});
    plan.push_back({p + "self_attn.v_proj.weight", {c.kv_dim(), c.hidden_size}, false});
    plan.push_back({p + "self_attn.o_proj.weight", {c.hidden_size, c.q_dim()}, false});
    plan.push_back({p + "self_attn.q_norm.weight", {c.head_dim}, true});
    plan.push_back({p + "self_attn.k_norm.weight", {c.head_dim}, true});
    plan.push_back({p + "post_attention_layernorm.weight", {c.hidden_size}, true});
    plan.push_back({p + "mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size}, false});
    plan.push_back({p + "mlp.up_proj.weight", {c.intermediate_size, c.hidden_size}, false});
    plan.push_back({p + "mlp.down_proj.weight", {c.hidden_size, c.intermediate_size}, false});
  }
  plan.push_back({"model.norm.weight", {c.hidden_size}, true});
  if (!c.tie_word_embeddings) plan.push_back({"lm_head.weight", {c.vocab_size, c.hidden_size}, false});
  return plan;
}

// Standard normal from two Philox words (Box-Muller); stream = tensor index keeps tensors apart.
inline float philox_normal(uint64_t seed, uint64_t element, uint32_t tensor) {
  const Philox4x32 block = philox_block(seed, element, 0, tensor);
  const double u1 = (double(block.word[0] >> 8) + 1.0) * (1.0 / 16777216.0);  // (0, 1]
  const double u2 = double(block.word[1] >> 8) * (1.0 / 16777216.0);          // [0, 1)
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

void fill_tensor(const TensorPlan& plan, uint32_t tensor_index, const Qwen3InitOptions& options, uint8_t* out) {
  int64_t numel = 1;
  for (int64_t d : plan.shape) numel *= d;
  const DType dtype = options.dtype;
  default_thread_pool().parallel_for(size_t(numel), [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      const float value = plan.is_norm ? 1.0f : options.init_std * philox_normal(options.seed, i, tensor_index);
      if (dtype == DType::F32) {
        std::memcpy(out + 4 * i, &value, 4);
      } else {
        const uint16_t half = dtype == DType::BF16 ? f32_to_bf16(value) : f32_to_f16(value);
        std::memcpy(out + 2 * i, &half, 2);
      }
    }
  });
}

}  // namespace

int64_t init_qwen3_checkpoint(const Qwen3InitOptions& options) {
  if (options.dtype != DType::F32 && options.dtype != DType::BF16 && options.dtype != DType::F16) {
    throw std::invalid_argument(std::string("model init: dtype must be F32, BF16 or F16, got ") + dtype_name(options.dtype));
  }
  const Qwen3Config config = load_qwen3_config(options.directory + "/config.json");
  const std::vector<TensorPlan> plan = plan_tensors(config);
  std::vector<std::vector<uint8_t>> storage(plan.size());
  std::vector<TensorToWrite> tensors;
  int64_t parameters = 0;
  for (size_t t = 0; t < plan.size(); ++t) {
    int64_t numel = 1;
    for (int64_t d : plan[t].shape) numel *= d;
    parameters += numel;
    storage[t].resize(size_t(numel) * dtype_size(options.dtype));
    fill_tensor(plan[t], uint32_t(t), options, storage[t].data());
    tensors.push_back({plan[t].name, options.dtype, plan[t].shape, storage[t].data()});
  }
  write_safetensors(options.directory + "/model.safetensors", tensors, {{"format", "pt"}});
  return parameters;
}

}  // namespace s3::model
