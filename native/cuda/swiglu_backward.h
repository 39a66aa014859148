// swiglu_backward.h: the CUDA twin of cpu/swiglu_backward.h (core/ops/swiglu.h per element; expf's
// last bit may differ from glibc's, so the two agree to f32 rounding). Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// dgate, dup [N] overwritten (either may equal gate, up or dout: every element is read before it is
// written); dout, gate, up [N].
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N,
                     cudaStream_t stream);

}  // namespace s3::cuda
