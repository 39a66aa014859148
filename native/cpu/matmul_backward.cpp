// matmul_backward.cpp: the implementation of cpu/matmul_backward.h (see the header for the contract and layouts).
#include "cpu/matmul_backward.h"

#include "cpu/matmul_nn.h"
#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {

void matmul_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t M,
                     int64_t N, int64_t K, ThreadPool& pool, MatmulPrecision precision) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (dinp != nullptr) {
    // dinp[M × K] = dout[M × N] · W[N × K]: W is already the row-major right-hand side.
    matmul_nn(matmul_nn_args(dinp, dout, weight, M, K, N, false), precision, pool);
  }
  if (dweight != nullptr) {
    // dweight[N × K] += doutᵀ · inp: A = doutᵀ read through its strides (element (n, m) at dout[m·N + n]).
    MatmulNnArgs args = matmul_nn_args(dweight, dout, inp, N, K, M, true);
    args.a_row = 1;
    args.a_col = N;
    matmul_nn(args, precision, pool);
  }
}

}  // namespace s3::cpu
