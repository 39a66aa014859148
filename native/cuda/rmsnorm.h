// rmsnorm.h: the CUDA twin of cpu/rmsnorm.h. One warp per row: the sum of squares in double (a
// fixed butterfly over the lanes' strided partial sums), then core/ops/rmsnorm.h's finish, so the
// result agrees with the CPU's to the last bit of that double sum. Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// out, inp: [N × C] f32 (out may equal inp); weight: [C] f32.
void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps, cudaStream_t stream);

}  // namespace s3::cuda
