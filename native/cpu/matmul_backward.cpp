// matmul_backward.cpp: the implementation of cpu/matmul_backward.h (see the header for the contract and layouts).
#include "cpu/matmul_backward.h"

#include "cpu/matmul_nn.h"
#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {
namespace {

// dweight[N × K] += doutᵀ · inp: A = doutᵀ read through its strides (element (n, m) at dout[m·N + n]).
void weight_gradient(float* dweight, const float* dout, const float* inp, int64_t M, int64_t N, int64_t K,
                     ThreadPool& pool, MatmulPrecision precision) {
  MatmulNnArgs args = matmul_nn_args(dweight, dout, inp, N, K, M, true);
  args.a_row = 1;
  args.a_col = N;
  matmul_nn(args, precision, pool);
}

// The packed operands of the tile path, kept per calling thread: the trainer calls it with the same
// few shapes every step.
struct BackwardTiles {
  MatmulNnBf16PackedA dout, dout_t;
  MatmulNnBf16PackedB inp;
};

BackwardTiles& calling_thread_tiles() {
  thread_local BackwardTiles tiles;
  return tiles;
}

}  // namespace

void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t M,
                     int64_t N, int64_t K, ThreadPool& pool, MatmulPrecision precision) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (dinp != nullptr) {
    // dinp[M × K] = dout[M × N] · W[N × K]: W is already the row-major right-hand side.
    matmul_nn(matmul_nn_args(dinp, dout, weight, M, K, N, false), precision, pool);
  }
  if (dweight != nullptr) weight_gradient(dweight, dout, inp, M, N, K, pool, precision);
}

void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, int64_t M, int64_t N, int64_t K,
                     ThreadPool& pool, const MatmulNnBf16PackedB& weight_tiles) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (weight_tiles.kernels != nullptr && weight_tiles.kernels->tiles) {
    MatmulNnBf16PackedB& inp_pairs = calling_thread_tiles().inp;
    if (dweight != nullptr) matmul_nn_bf16_pack_b(inp_pairs, inp, K, M, K, *weight_tiles.kernels, pool);
    matmul_backward(dinp, dweight, dout, M, N, K, pool, weight_tiles, inp_pairs);
    return;
  }
  if (dinp != nullptr) matmul_nn_bf16(matmul_nn_args(dinp, dout, nullptr, M, K, N, false), weight_tiles, pool);
  if (dweight != nullptr) weight_gradient(dweight, dout, inp, M, N, K, pool, MatmulPrecision::Bf16);
}

void matmul_backward(float* dinp, float* dweight, const float* dout, int64_t M, int64_t N, int64_t K, ThreadPool& pool,
                     const MatmulNnBf16PackedB& weight_tiles, const MatmulNnBf16PackedB& inp_pairs) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const MatmulNnBf16Kernels& kernels = *weight_tiles.kernels;
  BackwardTiles& tiles = calling_thread_tiles();
  matmul_nn_bf16_pack_a(tiles.dout, dout, N, 1, M, N, kernels, pool);
  if (dinp != nullptr) matmul_nn_bf16(matmul_nn_args(dinp, nullptr, nullptr, M, K, N, false), tiles.dout, weight_tiles, pool);
  if (dweight != nullptr) {
    matmul_nn_bf16_transpose_a(tiles.dout_t, tiles.dout, pool);
    matmul_nn_bf16(matmul_nn_args(dweight, nullptr, nullptr, N, K, M, true), tiles.dout_t, inp_pairs, pool);
  }
}

}  // namespace s3::cpu
