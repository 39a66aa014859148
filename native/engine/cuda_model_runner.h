// cuda_model_runner.h: the CUDA runner (model_runner.h) on device 0: the weights uploaded once per
// version (model/qwen3_device_weights.h), the engine's KV cache in device memory
// (cuda/kv_cache.h), the forward pass of model/qwen3_forward_cuda.h and the sampler of
// cuda/sampling.h, all on one stream; only the step's bookkeeping goes up and its draws come back.
// Compiled only with CUDA. Unverified on a GPU until test_cuda_model.cpp and the GPU check run.
#pragma once

#include <memory>

#include "engine/model_runner.h"

namespace s3::engine {

// Throws std::runtime_error when the device cannot hold the weights, the cache or the scratch
// (cuda::DeviceOutOfMemory, naming what to lower) or when cuBLASLt is not usable.
std::unique_ptr<ModelRunner> make_cuda_model_runner(const RunnerOptions& options, std::shared_ptr<const model::Qwen3Weights> weights);

}  // namespace s3::engine
