// trainer_compute.cpp: choosing the trainer's compute for a device; see trainer_compute.h.
#include "train/trainer_compute.h"

#include <stdexcept>

#include "train/cpu_trainer_compute.h"
#ifdef S3_WITH_CUDA
#include "train/cuda_trainer_compute.h"
#endif

namespace s3::train {

std::unique_ptr<TrainerCompute> make_trainer_compute(model::Device device, const model::Qwen3Config& config,
                                                     const model::Qwen3ParamLayout& layout, std::vector<float> params,
                                                     const TrainerComputeOptions& options) {
  if (device == model::Device::Cpu) return std::make_unique<CpuTrainerCompute>(config, layout, std::move(params), options);
#ifdef S3_WITH_CUDA
  return make_cuda_trainer_compute(config, layout, std::move(params), options);
#else
  throw std::runtime_error("device cuda: this addon was built without CUDA (no nvcc at build time, or S3_CUDA=OFF)");
#endif
}

}  // namespace s3::train
