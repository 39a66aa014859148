// matmul_backward: the backward of a linear layer out[M×N] = inp[M×K] · Wᵀ (W [N×K], f32).
#pragma once

#include <cstdint>

#include "core/matmul_precision.h"
#include "core/thread_pool.h"
#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {

// dinp[M×K] = dout[M×N] · W (overwritten; skipped when dinp is null);
// dweight[N×K] += doutᵀ · inp (accumulated; skipped when dweight is null).
// Both go through the SIMD matmul_nn kernels without transposed copies; each element is one fixed
// FMA chain (over n for dinp, over m for dweight), so the result is deterministic for any pool.
// With bf16 precision both products take BF16-rounded operands (cpu/matmul_nn_bf16.h): dout, W
// and inp are rounded, the sums stay f32 and dweight is still accumulated in f32.
void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t M,
                     int64_t N, int64_t K, ThreadPool& pool, MatmulPrecision precision = MatmulPrecision::F32);

// The same at bf16 precision with W [N × K] already packed as B for the level's BF16 kernels
// (matmul_nn_bf16_pack_b, or the weights' tiles of cpu/packed_weights.h): dinp = dout · W on it, the
// bits of packing W per call.
void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, int64_t M, int64_t N, int64_t K,
                     ThreadPool& pool, const MatmulNnBf16PackedB& weight_tiles);

// The same on tile kernels (MatmulNnBf16Kernels::tiles) with inp [M × K] also packed, as the B of
// dweight's product (matmul_nn_bf16_pack_b(inp_pairs, inp, K, M, K, ...)), so the layers that share
// an input (q, k and v; gate and up) pack it once. dout is packed once as dinp's A, and dweight's
// A = doutᵀ is transposed from those tiles rather than read and rounded again. The bits of the
// overloads above.
void matmul_backward(float* dinp, float* dweight, const float* dout, int64_t M, int64_t N, int64_t K, ThreadPool& pool,
                     const MatmulNnBf16PackedB& weight_tiles, const MatmulNnBf16PackedB& inp_pairs);

}  // namespace s3::cpu
