// cpu_model_runner.h: the CPU runner (model_runner.h): the f32 forward pass of model/qwen3_forward.h
// straight from the stored weights, a KV cache in host memory, and cpu::sample_forward per sampled
// row, each step split between the thread pool's threads.
#pragma once

#include <memory>
#include <vector>

#include "engine/model_runner.h"
#include "model/kv_cache.h"

namespace s3::engine {

class CpuModelRunner final : public ModelRunner {
 public:
  CpuModelRunner(const RunnerOptions& options, std::shared_ptr<const model::Qwen3Weights> weights, ThreadPool& pool);

  RunnerDescription describe() const override;
  void set_weights(std::shared_ptr<const model::Qwen3Weights> weights) override;
  void run_batch(const RunnerBatch& batch, cpu::TokenDraw* draws) override;
  std::vector<float> score(const int32_t* tokens, int64_t T) override;
  void logits(const int32_t* tokens, int64_t T, int64_t rope_offset, float* logits) override;

 private:
  RunnerOptions options_;
  std::shared_ptr<const model::Qwen3Weights> weights_;
  ThreadPool& pool_;
  model::KvCache cache_;
  model::Qwen3Workspace workspace_;
  std::vector<float> logits_;
};

}  // namespace s3::engine
