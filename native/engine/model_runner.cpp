// Choosing the runner for a device; see model_runner.h.
#include "engine/model_runner.h"

#include <stdexcept>

#include "engine/cpu_model_runner.h"

namespace s3::engine {

std::unique_ptr<ModelRunner> make_model_runner(const RunnerOptions& options,
                                               std::shared_ptr<const model::Qwen3Weights> weights, ThreadPool& pool) {
  if (options.device == model::Device::Cpu) return std::make_unique<CpuModelRunner>(options, std::move(weights), pool);
  throw std::runtime_error("device cuda: the CUDA model runner is not built yet");
}

}  // namespace s3::engine
