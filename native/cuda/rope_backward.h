// rope_backward.h: the CUDA twin of cpu/rope_backward.h: the transpose of rotate-half RoPE in place
// on the gradient, with core/ops/rope.h's rotation and the device tables cuda/rope.h uses, so every
// value has the CPU's bits. Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// dx: [T × NH × HD] in place; positions: [T] rows of the tables; cos, sin: [positions × HD/2].
void rope_backward(float* dx, const int32_t* positions, const float* cos, const float* sin, int64_t T, int64_t NH,
                   int64_t HD, cudaStream_t stream);

}  // namespace s3::cuda
