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
  if (dinp != nullptr) matmul_nn_bf16(matmul_nn_args(dinp, dout, nullptr, M, K, N, false), weight_tiles, pool);
  if (dweight != nullptr) weight_gradient(dweight, dout, inp, M, N, K, pool, MatmulPrecision::Bf16);
}

}  // namespace s3::cpu
