// linear_bf16: out[M × N] = inp[M × K] · Wᵀ with BF16 products for f32 inputs and f32 weights, the
// trainer's forward linear layers and LM-head logits under precision.train: bf16 on CPUs below
// avx512bf16 (the avx512bf16 and amx levels run them as C = A·B on W packed straight from its rows,
// cpu/matmul_nn_bf16.h, which gives the inference forward's bits on packed weights). W is rounded to
// BF16 rows (round-to-nearest-even) by the caller, once per weight version it multiplies with
// (round_to_bf16), and the product runs on the forward matmul's BF16-weight kernels (cpu/matmul.h):
// - avx512bf16: VDPBF16PS, the input rounded to BF16 once per call by matmul_forward; each
//   element's order is that kernel's (lane l sums the pairs at k ≡ 2l, 2l + 1 (mod 32) in increasing
//   k, then a fixed tree), so rows are batch-invariant and the bits do not depend on threads.
// - other levels: the input is rounded to BF16 values in f32 here, the weights widened exactly, so
//   each product is exact and only the f32 sums round.
// No transposed copy of W is needed (the matmul_nn path of the f32 trainer transposes W per call).
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/matmul.h"

namespace s3::cpu {

// out[i] = f32_to_bf16(in[i]) for i < count, split between the pool's threads.
void round_to_bf16(uint16_t* out, const float* in, int64_t count, ThreadPool& pool);

// out = bf16(inp) · w_bf16ᵀ; w_bf16: [N × K] BF16 rows. input_scratch holds the rounded input at
// levels whose kernels do not round it themselves.
void linear_bf16(float* out, const float* inp, const uint16_t* w_bf16, int64_t M, int64_t N, int64_t K,
                 std::vector<float>& input_scratch, ThreadPool& pool, const MatmulKernels& kernels);
void linear_bf16(float* out, const float* inp, const uint16_t* w_bf16, int64_t M, int64_t N, int64_t K,
                 std::vector<float>& input_scratch, ThreadPool& pool);

}  // namespace s3::cpu
