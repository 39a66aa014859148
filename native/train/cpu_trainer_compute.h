// cpu_trainer_compute.h: the trainer's compute on the host (train/trainer_compute.h): parameters,
// gradients and moments in host vectors; model/qwen3_train.h's pass, train/losses.h's fused loss
// and train/adamw.h's update on a thread pool, deterministic for any thread count.
#pragma once

#include <memory>

#include "core/thread_pool.h"
#include "model/qwen3_train.h"
#include "train/losses.h"
#include "train/trainer_compute.h"

namespace s3::train {

class CpuTrainerCompute final : public TrainerCompute {
 public:
  CpuTrainerCompute(const model::Qwen3Config& config, const model::Qwen3ParamLayout& layout, std::vector<float> params,
                    const TrainerComputeOptions& options);

  std::string description() const override;
  LossStats accumulate(const TrainRows& rows, const LossOptions& options,
                       const std::function<void(int64_t layer)>& on_layer_done) override;
  AdamWStepResult step(const AdamWOptions& options) override;
  void zero_grad() override;
  int64_t step_count() const override { return adam_.step; }
  bool kept_activations() const override { return state_.saved != nullptr; }
  void all_reduce_gradient_range(Collective& group, size_t offset, size_t count) override {
    group.all_reduce_sum(grads_.data() + offset, count);
  }
  const std::vector<float>& params() const override { return params_; }
  const std::vector<float>& grads() const override { return grads_; }
  const AdamWState& optimizer_state() const override { return adam_; }
  void set_params(const float* values) override;
  void set_state(std::vector<float> params, AdamWState state) override;

 private:
  // The bytes this batch's forward may keep activations in (TrainerComputeOptions::activation_bytes).
  size_t activation_budget() const;

  model::Qwen3Config config_;
  model::Qwen3ParamLayout layout_;
  TrainerComputeOptions options_;
  std::vector<float> params_, grads_;
  AdamWState adam_;
  std::unique_ptr<ThreadPool> pool_;
  // The passes' activations and buffers, kept from one accumulate to the next (their pages stay
  // faulted in: a fresh set cost ~90 thousand page faults per Qwen3-0.6B step at 512 tokens).
  model::Qwen3TrainState state_;
  HeadLossScratch head_scratch_;
  std::vector<float> dh_;
};

}  // namespace s3::train
