// AVX2 C (+)= A·B (compiled with -mavx2 -mfma; called only after run-time detection). The same
// scheme as matmul_nn_avx512.cpp with 8-column vectors: a tile of kRows × kVectors (12
// accumulators + 3 B vectors + 1 broadcast = 16 registers), panels of kPanel columns, k blocks.
#include <immintrin.h>

#include "cpu/matmul_nn.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 8;
constexpr int kRows = 4;
constexpr int kVectors = 3;
constexpr int64_t kPanel = kLanes * kVectors;
constexpr int64_t kBlockK = 256;

template <int R, int V, bool kMaskLast>
void tile(const MatmulNnArgs& p, int64_t i, int64_t n, int64_t k0, int64_t k1, bool load_c, __m256i last) {
  __m256 acc[R][V];
  float* c = p.c + i * p.ldc + n;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (!load_c) {
        acc[r][v] = _mm256_setzero_ps();
      } else if (kMaskLast && v == V - 1) {
        acc[r][v] = _mm256_maskload_ps(c + r * p.ldc + v * kLanes, last);
      } else {
        acc[r][v] = _mm256_loadu_ps(c + r * p.ldc + v * kLanes);
      }
    }
  }
  const float* a = p.a + i * p.a_row;
  for (int64_t k = k0; k < k1; k++) {
    const float* brow = p.b + k * p.ldb + n;
    __m256 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (kMaskLast && v == V - 1) {
        bv[v] = _mm256_maskload_ps(brow + v * kLanes, last);
      } else {
        bv[v] = _mm256_loadu_ps(brow + v * kLanes);
      }
    }
    const float* ak = a + k * p.a_col;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m256 av = _mm256_broadcast_ss(ak + r * p.a_row);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (kMaskLast && v == V - 1) {
        _mm256_maskstore_ps(c + r * p.ldc + v * kLanes, last, acc[r][v]);
      } else {
        _mm256_storeu_ps(c + r * p.ldc + v * kLanes, acc[r][v]);
      }
    }
  }
}

template <int V, bool kMaskLast>
void panel(const MatmulNnArgs& p, int64_t n, int64_t k0, int64_t k1, bool load_c, __m256i last) {
  int64_t i = 0;
  for (; i + kRows <= p.M; i += kRows) tile<kRows, V, kMaskLast>(p, i, n, k0, k1, load_c, last);
  switch (p.M - i) {
    case 3: tile<3, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 2: tile<2, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 1: tile<1, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    default: break;
  }
}

void panel_any(int vectors, const MatmulNnArgs& p, int64_t n, int64_t k0, int64_t k1, bool load_c, __m256i last) {
  switch (vectors) {
    case 1: return panel<1, true>(p, n, k0, k1, load_c, last);
    case 2: return panel<2, true>(p, n, k0, k1, load_c, last);
    default: return panel<3, true>(p, n, k0, k1, load_c, last);
  }
}

void matmul_nn_columns_avx2(const MatmulNnArgs& p, int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; n += kPanel) {
    const int64_t width = smaller(kPanel, n_end - n);
    const int vectors = int((width + kLanes - 1) / kLanes);
    const int rest = int(width % kLanes);
    // The last vector always goes through maskload/maskstore (all lanes when the panel is full):
    // an unmasked instantiation of the tile made GCC emit an exception-handling personality
    // reference (a weak symbol) at -O0, which test/build/simd-objects.test.ts forbids.
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(rest == 0 ? kLanes : rest), lanes);
    if (p.K <= 0) {
      if (!p.accumulate) panel_any(vectors, p, n, 0, 0, false, last);
      continue;
    }
    for (int64_t k0 = 0; k0 < p.K; k0 += kBlockK) {
      const int64_t k1 = smaller(p.K, k0 + kBlockK);
      panel_any(vectors, p, n, k0, k1, p.accumulate || k0 > 0, last);
    }
  }
}

}  // namespace

const MatmulNnKernels kMatmulNnAvx2 = {"avx2", matmul_nn_columns_avx2};

}  // namespace s3::cpu
