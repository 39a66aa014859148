// fp8_activations.h: a GEMM's input rows quantized to FP8 E4M3 in 1 × 128 groups for cuBLASLt's
// block-scaled FP8 GEMM: each group's scale is max|x| / 448 as for the KV cache's rows
// (core/ops/fp8_rows.h), stored in the transposed layout core/ops/fp8_block_scales.h describes, with
// the rows padded to a multiple of 4 (zeros, scale 1). Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// in: [T × K] f32; out: [fp8_activation_rows(T) × K] bytes; scales: [fp8_blocks(K) × fp8_activation_rows(T)].
void quantize_fp8_activations(uint8_t* out, float* scales, const float* in, int64_t T, int64_t K, cudaStream_t stream);

}  // namespace s3::cuda
