// qwen3_device_params.h: a copy of a trainer's f32 master parameters on CUDA device 0, in
// qwen3_param_layout.h's order, handed to an inference engine on the same device, which converts it
// into its weights there (model/qwen3_device_weights.h) instead of taking host copies: the trainer's
// weights reach the engine without a trip through host memory. Plain C++ (no CUDA types), so the
// engine's interface carries it in builds without CUDA too, where none is ever made.
#pragma once

#include <memory>

#include "model/qwen3_config.h"
#include "model/qwen3_param_layout.h"

namespace s3::model {

struct Qwen3DeviceParamSnapshot {
  Qwen3Config config;
  Qwen3ParamLayout layout;
  // [layout.total] f32 in device memory, freed when the last holder lets go (it outlives the trainer
  // that made it).
  std::shared_ptr<const float> data;
};

}  // namespace s3::model
