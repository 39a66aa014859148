// The scalar C (+)= A·B fallback, the per-level dispatch and the split of columns between threads;
// see matmul_nn.h.
#include "cpu/matmul_nn.h"

#include <algorithm>
#include <cmath>

#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

void matmul_nn_columns_scalar(const MatmulNnArgs& p, int64_t n_begin, int64_t n_end) {
  for (int64_t i = 0; i < p.M; i++) {
    float* c = p.c + i * p.ldc;
    for (int64_t n = n_begin; n < n_end; n++) {
      float acc = p.accumulate ? c[n] : 0.0f;
      for (int64_t k = 0; k < p.K; k++) acc = std::fma(p.a[i * p.a_row + k * p.a_col], p.b[k * p.ldb + n], acc);
      c[n] = acc;
    }
  }
}

const MatmulNnKernels kMatmulNnScalar = {"scalar", matmul_nn_columns_scalar};

}  // namespace

MatmulNnArgs matmul_nn_args(float* c, const float* a, const float* b, int64_t M, int64_t N, int64_t K, bool accumulate) {
  MatmulNnArgs args;
  args.c = c;
  args.a = a;
  args.b = b;
  args.M = M;
  args.N = N;
  args.K = K;
  args.a_row = K;
  args.a_col = 1;
  args.ldb = N;
  args.ldc = N;
  args.accumulate = accumulate;
  return args;
}

void matmul_nn_serial(const MatmulNnArgs& args) {
  if (args.M <= 0 || args.N <= 0) return;
  matmul_nn_kernels().columns(args, 0, args.N);
}

void matmul_nn(const MatmulNnArgs& args, ThreadPool& pool) { matmul_nn(args, pool, matmul_nn_kernels()); }

void matmul_nn(const MatmulNnArgs& args, ThreadPool& pool, const MatmulNnKernels& kernels) {
  if (args.M <= 0 || args.N <= 0) return;
  const int64_t units = (args.N + kMatmulNnColumnsPerUnit - 1) / kMatmulNnColumnsPerUnit;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    kernels.columns(args, int64_t(begin) * kMatmulNnColumnsPerUnit,
                    std::min(args.N, int64_t(end) * kMatmulNnColumnsPerUnit));
  });
}

const MatmulNnKernels* matmul_nn_kernels_for(SimdLevel level) {
  return select_kernels<MatmulNnKernels>({&kMatmulNnScalar, &kMatmulNnAvx2, &kMatmulNnAvx512}, level);
}

const MatmulNnKernels& matmul_nn_kernels() {
  static const MatmulNnKernels& chosen = *matmul_nn_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
