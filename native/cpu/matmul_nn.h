// matmul_nn.h: C[M × N] (+)= A[M × K] · B[K × N] in f32 with B row-major (no transposed weight),
// the shape of every backward product: dinp = dout · W, dW += doutᵀ · inp, and the attention
// products (S = Q · Kᵀ against a transposed K panel, O = P · V, dQ = dS · K, dK += dSᵀ · Q, …).
// A may be read transposed through its strides, so no product needs a transposed copy of A.
//
// Kernels broadcast one A element and multiply it into vectors of B columns (no horizontal sums,
// so short inner dimensions such as a 32-wide head cost nothing extra). Every C element is one
// chain of fused multiply-adds in increasing k, starting from C (accumulate) or 0, whatever the
// tiling, the cache blocking or the thread count: same inputs, same bits on one SIMD level.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace s3::cpu {

struct MatmulNnArgs {
  float* c = nullptr;        // [M × N], rows ldc apart
  const float* a = nullptr;  // element (i, k) at a[i * a_row + k * a_col]
  const float* b = nullptr;  // [K × N], rows ldb apart
  int64_t M = 0, N = 0, K = 0;
  int64_t a_row = 0, a_col = 1, ldb = 0, ldc = 0;
  bool accumulate = false;   // C += A·B (else C = A·B)
};

// Row-major A [M × K] (a_row = K), B [K × N], C [M × N], all contiguous.
MatmulNnArgs matmul_nn_args(float* c, const float* a, const float* b, int64_t M, int64_t N, int64_t K, bool accumulate);

struct MatmulNnKernels {
  const char* name;
  // Columns [n_begin, n_end) of C; allocates nothing.
  void (*columns)(const MatmulNnArgs& args, int64_t n_begin, int64_t n_end);
};

// On this thread (inside another parallel_for).
void matmul_nn_serial(const MatmulNnArgs& args);
// Columns of C split between the pool's threads in fixed blocks (of kMatmulNnColumnsPerUnit).
void matmul_nn(const MatmulNnArgs& args, ThreadPool& pool, const MatmulNnKernels& kernels);
void matmul_nn(const MatmulNnArgs& args, ThreadPool& pool);

// Threads take contiguous runs of this many columns (one AVX-512 panel).
constexpr int64_t kMatmulNnColumnsPerUnit = 64;

const MatmulNnKernels* matmul_nn_kernels_for(SimdLevel level);  // nullptr if not built
const MatmulNnKernels& matmul_nn_kernels();                     // cpu_info().level's

extern const MatmulNnKernels kMatmulNnAvx2;
extern const MatmulNnKernels kMatmulNnAvx512;

}  // namespace s3::cpu
