// Bulk dtype conversions on a CUDA device, bit-identical to the scalar conversions of
// core/dtype.h (the same S3_HOST_DEVICE functions run in the kernels). Pointers are device memory.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace s3::cuda {

void bf16_to_f32(const uint16_t* src, float* dst, size_t n, cudaStream_t stream);
void f32_to_bf16(const float* src, uint16_t* dst, size_t n, cudaStream_t stream);
void fp8e4m3_to_f32(const uint8_t* src, float* dst, size_t n, cudaStream_t stream);
void f32_to_fp8e4m3(const float* src, uint8_t* dst, size_t n, cudaStream_t stream);

}  // namespace s3::cuda
