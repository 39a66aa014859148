// rope.h: the CUDA twin of cpu/rope.h: rotate-half RoPE in place with core/ops/rope.h's rotation,
// from cos/sin tables made on the host by cpu::rope_tables (uploaded once), so every rotated value
// has the bits the CPU computes. Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// x: [T × NH × HD] rotated in place; positions: [T] rotary positions (rows of the tables);
// cos, sin: [positions × HD/2].
void rope_forward(float* x, const int32_t* positions, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD,
                  cudaStream_t stream);

}  // namespace s3::cuda
