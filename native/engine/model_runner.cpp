// Choosing the runner for a device; see model_runner.h.
#include "engine/model_runner.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/environment_switch.h"
#include "engine/cpu_model_runner.h"
#include "model/bf16_round.h"
#include "model/fp8_quantize.h"
#ifdef S3_WITH_CUDA
#include "engine/cuda_model_runner.h"
#endif

namespace s3::engine {

std::shared_ptr<const model::Qwen3Weights> weights_in_format(std::shared_ptr<const model::Qwen3Weights> weights, WeightFormat format) {
  switch (format) {
    case WeightFormat::Stored:
      return weights;
    case WeightFormat::Bf16:
      return std::make_shared<const model::Qwen3Weights>(model::round_weights_bf16(*weights));
    case WeightFormat::Fp8:
      if (weights->config().fp8_blockwise) return weights;
      return std::make_shared<const model::Qwen3Weights>(model::quantize_weights_fp8(*weights));
  }
  return weights;
}

bool parse_cuda_graphs(const std::string& value) {
  return parse_environment_switch("S3_CUDA_GRAPHS", value, "decode steps through CUDA graphs");
}

bool cuda_graphs_enabled(CudaGraphs choice) {
  switch (choice) {
    case CudaGraphs::On: return true;
    case CudaGraphs::Off: return false;
    case CudaGraphs::FromEnvironment: break;
  }
  static const bool from_environment = [] {
    const char* value = std::getenv("S3_CUDA_GRAPHS");
    return parse_cuda_graphs(value != nullptr ? value : "");
  }();
  return from_environment;
}

void ModelRunner::set_weights_from_device(std::shared_ptr<const model::Qwen3DeviceParamSnapshot>) {
  throw std::logic_error("this runner takes host weights only (takes_device_params() is false)");
}

std::unique_ptr<ModelRunner> make_model_runner(const RunnerOptions& options,
                                               std::shared_ptr<const model::Qwen3Weights> weights, ThreadPool& pool) {
  if (options.device == model::Device::Cpu) return std::make_unique<CpuModelRunner>(options, std::move(weights), pool);
#ifdef S3_WITH_CUDA
  return make_cuda_model_runner(options, std::move(weights));
#else
  throw std::runtime_error("device cuda: this addon was built without CUDA (no nvcc at build time, or S3_CUDA=OFF)");
#endif
}

}  // namespace s3::engine
