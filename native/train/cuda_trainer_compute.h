// cuda_trainer_compute.h: the trainer's compute on CUDA device 0 (train/trainer_compute.h): f32
// master parameters, gradients and AdamW's moments (f32 or bf16) in device memory; the training pass
// of model/qwen3_train_cuda.h, the fused loss of train/losses_cuda.h and the update of cuda/adamw.h,
// all on one stream. Precision Bf16 (the paper's, App. A.1) gives every GEMM bf16 operands from a
// bf16 copy of the parameters made once per update; F32 keeps f32 GEMMs (the CPU trainer's numerics
// to rounding). Host copies of parameters, gradients and moments are downloaded when asked for
// (checkpoints, the engine's weight swap). Compiled only with CUDA; unverified on a GPU until
// test_cuda_trainer.cpp runs there.
#pragma once

#include <memory>

#include "train/trainer_compute.h"

namespace s3::train {

// Throws std::runtime_error when cuBLASLt is not usable or no device is visible, and
// cuda::DeviceOutOfMemory when the parameters, gradients and moments do not fit.
std::unique_ptr<TrainerCompute> make_cuda_trainer_compute(const model::Qwen3Config& config,
                                                          const model::Qwen3ParamLayout& layout, std::vector<float> params,
                                                          const TrainerComputeOptions& options);

}  // namespace s3::train
