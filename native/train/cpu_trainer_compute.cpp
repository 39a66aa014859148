// cpu_trainer_compute.cpp: the implementation of train/cpu_trainer_compute.h.
#include "train/cpu_trainer_compute.h"

#include <algorithm>
#include <stdexcept>

#include "core/host_memory.h"
#include "core/huge_pages.h"
#include "cpu/matmul.h"
#include "model/qwen3_train.h"

namespace s3::train {

CpuTrainerCompute::CpuTrainerCompute(const model::Qwen3Config& config, const model::Qwen3ParamLayout& layout,
                                     std::vector<float> params, const TrainerComputeOptions& options)
    : config_(config), layout_(layout), options_(options), params_(std::move(params)) {
  if (params_.size() != layout_.total) throw std::invalid_argument("CpuTrainerCompute: params do not match the layout");
  // Gigabytes at the 0.6B shape, each filled by one thread: on huge pages the fill takes hundreds of
  // times fewer page faults (docs/benchmarks.md, "The trainer's state on huge pages").
  assign_on_huge_pages(grads_, layout_.total, 0.0f);
  if (options_.state_dtype == OptimizerStateDtype::Bf16) {
    assign_on_huge_pages(adam_.m_bf16, layout_.total, uint16_t(0));
    assign_on_huge_pages(adam_.v_bf16, layout_.total, uint16_t(0));
  } else {
    assign_on_huge_pages(adam_.m, layout_.total, 0.0f);
    assign_on_huge_pages(adam_.v, layout_.total, 0.0f);
  }
  pool_ = std::make_unique<ThreadPool>(options_.threads > 0 ? options_.threads : default_thread_count());
  state_.params_version = 1;  // bumped by every change of params_, so the weights' tiles are packed once per version
}

std::string CpuTrainerCompute::description() const {
  return std::string("cpu (") + cpu::matmul_kernels().name + ", " + std::to_string(pool_->num_threads()) + " threads)";
}

LossStats CpuTrainerCompute::accumulate(const TrainRows& rows, const LossOptions& options,
                                        const std::function<void(int64_t layer)>& on_layer_done) {
  const model::Qwen3TrainBatch batch = rows.model_batch();
  model::qwen3_train_forward(config_, layout_, params_.data(), batch, state_, *pool_, options_.matmul_precision,
                             activation_budget());
  dh_.resize(state_.final_normed.size());
  head_scratch_.head_version = state_.params_version;
  const LossStats stats = fused_head_loss(dh_.data(), grads_.data() + layout_.lm_head, state_.final_normed.data(),
                                          params_.data() + layout_.lm_head, rows.rows(), config_.hidden_size,
                                          config_.vocab_size, rows.loss_inputs(), options, *pool_, &head_scratch_);
  model::qwen3_train_backward(config_, layout_, params_.data(), grads_.data(), batch, state_, dh_.data(), *pool_, on_layer_done);
  return stats;
}

size_t CpuTrainerCompute::activation_budget() const {
  if (options_.activation_bytes > 0) return options_.activation_bytes;
  const size_t available = available_host_memory_bytes();
  if (available == 0) return model::kQwen3SavedActivationBytes;  // nothing to size it by
  // Half of what is available now, the last batch's saved activations (which this batch reuses) included.
  return (available + model::qwen3_train_saved_bytes(state_)) / 2;
}

AdamWStepResult CpuTrainerCompute::step(const AdamWOptions& options) {
  const AdamWStepResult r = adamw_step(params_.data(), grads_.data(), params_.size(), adam_, options, *pool_);
  state_.params_version++;
  zero_grad();
  return r;
}

void CpuTrainerCompute::zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

void CpuTrainerCompute::set_params(const float* values) {
  std::copy(values, values + params_.size(), params_.begin());
  state_.params_version++;
}

void CpuTrainerCompute::set_state(std::vector<float> params, AdamWState state) {
  params_ = std::move(params);
  adam_ = std::move(state);
  state_.params_version++;
  zero_grad();
}

}  // namespace s3::train
