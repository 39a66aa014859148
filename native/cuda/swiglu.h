// swiglu.h: the CUDA twin of cpu/swiglu.h (core/ops/swiglu.h per element) and the residual add.
// Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// out, gate, up: [N] f32 (out may equal gate or up); out[i] = silu(gate[i]) · up[i].
void swiglu_forward(float* out, const float* gate, const float* up, int64_t N, cudaStream_t stream);

// x, delta: [N] f32; x[i] += delta[i].
void residual_forward(float* x, const float* delta, int64_t N, cudaStream_t stream);

}  // namespace s3::cuda
