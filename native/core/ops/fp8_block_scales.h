// ops/fp8_block_scales.h: the scale layouts of cuBLASLt's block-scaled FP8 GEMM (cuBLAS ≥ 12.9,
// sm_90), as index math the CPU tests check and the CUDA upload and quantize kernels use:
//   weights W [N × K] with 128 × 128 block scales (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F):
//     K-major, the K-block count padded to a multiple of 4 (PyTorch's is_blockwise_128x128_scaling,
//     aten/src/ATen/native/cuda/ScaledBlas.cpp), so a checkpoint's row-major weight_scale_inv
//     [ceil(N/128) × ceil(K/128)] matches byte for byte only when ceil(K/128) % 4 == 0;
//   activations X [T × K] with 1 × 128 scales (VEC128_32F): element (t, kb) at kb·T + t, the
//     transpose of a per-row quantizer's [T × ceil(K/128)] (is_blockwise_1x128_scaling's strides
//     (1, T)), T padded to a multiple of 4 as the GEMM's N dimension must be.
// Unverified on a GPU until the CUDA GEMM tests run (test_cuda_gemm.cpp).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

constexpr int64_t kFp8Block = 128;

S3_HOST_DEVICE inline int64_t fp8_blocks(int64_t n) { return (n + kFp8Block - 1) / kFp8Block; }
S3_HOST_DEVICE inline int64_t round_up_to(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Row stride, in scales, of the padded 128 × 128 weight-scale layout.
S3_HOST_DEVICE inline int64_t weight_scale_stride(int64_t K) { return round_up_to(fp8_blocks(K), 4); }
// Scales in the padded weight-scale layout of an [N × K] weight.
S3_HOST_DEVICE inline int64_t weight_scale_count(int64_t N, int64_t K) { return fp8_blocks(N) * weight_scale_stride(K); }
// Where the checkpoint's scale of block (nb, kb) goes.
S3_HOST_DEVICE inline int64_t weight_scale_index(int64_t nb, int64_t kb, int64_t K) { return nb * weight_scale_stride(K) + kb; }

// Token rows the FP8 GEMM's activation operand has: T padded to a multiple of 4.
S3_HOST_DEVICE inline int64_t fp8_activation_rows(int64_t T) { return round_up_to(T, 4); }
// Where the scale of token t's K-block kb goes, with T_padded = fp8_activation_rows(T).
S3_HOST_DEVICE inline int64_t activation_scale_index(int64_t t, int64_t kb, int64_t T_padded) { return kb * T_padded + t; }

}  // namespace s3::ops
