// AVX-512 C (+)= A·B (compiled with -mavx512f/bw/vl/dq; called only after run-time detection).
//
// A register tile of up to kRows rows × kVectors 16-column vectors of C: per k, kVectors loads of
// a B row and kRows broadcasts of A feed kRows × kVectors FMAs (24 accumulators + 4 B vectors +
// 1 broadcast ≤ 32 registers). Columns go in panels of kPanel, k in blocks of kBlockK so a B panel
// block (256 × 64 floats) stays in L2 while every row tile passes over it; a tile reloads C
// between k blocks, which leaves each element's single FMA chain in increasing k unchanged.
#include <immintrin.h>

#include "cpu/matmul_nn.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
constexpr int kRows = 6;
constexpr int kVectors = 4;
constexpr int64_t kPanel = kLanes * kVectors;
constexpr int64_t kBlockK = 256;

// Rows [i, i + R) × vectors [n, n + V·16) of C over k in [k0, k1); the last vector is masked to
// `last` when kMaskLast.
template <int R, int V, bool kMaskLast>
void tile(const MatmulNnArgs& p, int64_t i, int64_t n, int64_t k0, int64_t k1, bool load_c, __mmask16 last) {
  __m512 acc[R][V];
  float* c = p.c + i * p.ldc + n;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (!load_c) {
        acc[r][v] = _mm512_setzero_ps();
      } else if (kMaskLast && v == V - 1) {
        acc[r][v] = _mm512_maskz_loadu_ps(last, c + r * p.ldc + v * kLanes);
      } else {
        acc[r][v] = _mm512_loadu_ps(c + r * p.ldc + v * kLanes);
      }
    }
  }
  const float* a = p.a + i * p.a_row;
  for (int64_t k = k0; k < k1; k++) {
    const float* brow = p.b + k * p.ldb + n;
    __m512 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      bv[v] = (kMaskLast && v == V - 1) ? _mm512_maskz_loadu_ps(last, brow + v * kLanes) : _mm512_loadu_ps(brow + v * kLanes);
    }
    const float* ak = a + k * p.a_col;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m512 av = _mm512_set1_ps(ak[r * p.a_row]);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (kMaskLast && v == V - 1) {
        _mm512_mask_storeu_ps(c + r * p.ldc + v * kLanes, last, acc[r][v]);
      } else {
        _mm512_storeu_ps(c + r * p.ldc + v * kLanes, acc[r][v]);
      }
    }
  }
}

// Every row of C for one panel of V vectors and one k block.
template <int V, bool kMaskLast>
void panel(const MatmulNnArgs& p, int64_t n, int64_t k0, int64_t k1, bool load_c, __mmask16 last) {
  int64_t i = 0;
  for (; i + kRows <= p.M; i += kRows) tile<kRows, V, kMaskLast>(p, i, n, k0, k1, load_c, last);
  switch (p.M - i) {
    case 5: tile<5, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 4: tile<4, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 3: tile<3, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 2: tile<2, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    case 1: tile<1, V, kMaskLast>(p, i, n, k0, k1, load_c, last); break;
    default: break;
  }
}

template <bool kMaskLast>
void panel_any(int vectors, const MatmulNnArgs& p, int64_t n, int64_t k0, int64_t k1, bool load_c, __mmask16 last) {
  switch (vectors) {
    case 1: return panel<1, kMaskLast>(p, n, k0, k1, load_c, last);
    case 2: return panel<2, kMaskLast>(p, n, k0, k1, load_c, last);
    case 3: return panel<3, kMaskLast>(p, n, k0, k1, load_c, last);
    default: return panel<4, kMaskLast>(p, n, k0, k1, load_c, last);
  }
}

void matmul_nn_columns_avx512(const MatmulNnArgs& p, int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; n += kPanel) {
    const int64_t width = smaller(kPanel, n_end - n);
    const int vectors = int((width + kLanes - 1) / kLanes);
    const int64_t rest = width % kLanes;
    const __mmask16 last = rest == 0 ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1u);
    if (p.K <= 0) {  // C = 0 (or unchanged when accumulating)
      if (!p.accumulate) panel_any<true>(vectors, p, n, 0, 0, false, last);
      continue;
    }
    for (int64_t k0 = 0; k0 < p.K; k0 += kBlockK) {
      const int64_t k1 = smaller(p.K, k0 + kBlockK);
      const bool load_c = p.accumulate || k0 > 0;
      if (rest == 0) {
        panel_any<false>(vectors, p, n, k0, k1, load_c, last);
      } else {
        panel_any<true>(vectors, p, n, k0, k1, load_c, last);
      }
    }
  }
}

}  // namespace

const MatmulNnKernels kMatmulNnAvx512 = {"avx512", matmul_nn_columns_avx512};

}  // namespace s3::cpu
