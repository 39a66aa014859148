// The avx512bf16 level's kernel for BF16 weights packed into panels (weight_panels.h; compiled
// with the AVX-512 flags plus -mavx512bf16, called only after run-time detection).
//
// A register tile is up to kRows input rows × kVectors vectors of 16 output columns: per pair of
// k, kVectors loads of the panel's 64 bytes per vector and one broadcast of each row's input pair
// feed kRows × kVectors VDPBF16PS (24 accumulators + 4 weight vectors + 1 broadcast ≤ 32
// registers). Each output is one accumulator, starting at zero and adding the pairs of k in
// increasing order, one VDPBF16PS per pair: the order depends only on K, never on M, the tile, the
// column split or the thread count, so a row's result is the same bits in any batch. The input
// comes as matmul.cpp's BF16 panels (matmul.h, MatmulInput::panels), read one pair per broadcast.
#include <immintrin.h>

#include "cpu/matmul.h"
#include "cpu/weight_panels.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
constexpr int kRows = 6;
constexpr int kVectors = 4;
constexpr int kStepPairs = kMatmulRowAlign / 2;                 // pairs of k per panel step of the input
constexpr int kInputStepDwords = kMatmulPanelRows * kStepPairs;  // one step of an input panel, every row
static_assert(kWeightPanelColumns == kLanes * kVectors, "a weight panel is one tile's columns");

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh>(v); }

// Rows [m, m + R) × the V vectors whose weight columns start at `columns[v]` (stride 64 dwords per
// pair), stored to out (rows ldo apart) at vector offsets `at[v]`, the last masked to `last`.
template <int R, int V>
void tile(float* out, int64_t ldo, const uint32_t* input, int64_t steps, int64_t m, const uint32_t* const (&columns)[V],
          const int64_t (&at)[V], __mmask16 last) {
  const uint32_t* row[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    const int64_t i = m + r;
    row[r] = input + (i / kMatmulPanelRows) * steps * kInputStepDwords + (i % kMatmulPanelRows) * kStepPairs;
  }
  __m512 acc[R][V];
#pragma GCC unroll 32
  for (int x = 0; x < R * V; x++) acc[x / V][x % V] = _mm512_setzero_ps();
  for (int64_t s = 0; s < steps; s++) {
    const int64_t first = s * kStepPairs;
    for (int j = 0; j < kStepPairs; j++) {
      __m512i w[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) w[v] = _mm512_loadu_si512(columns[v] + (first + j) * kWeightPanelColumns);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        const __m512i x = _mm512_set1_epi32(int(row[r][s * kInputStepDwords + j]));
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], as_bf16(w[v]), as_bf16(x));
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      float* to = out + (m + r) * ldo + at[v];
      if (v == V - 1) {
        _mm512_mask_storeu_ps(to, last, acc[r][v]);
      } else {
        _mm512_storeu_ps(to, acc[r][v]);
      }
    }
  }
}

template <int V>
void rows(float* out, int64_t ldo, const uint32_t* input, int64_t steps, int64_t M, const uint32_t* const (&columns)[V],
          const int64_t (&at)[V], __mmask16 last) {
  int64_t m = 0;
  for (; m + kRows <= M; m += kRows) tile<kRows, V>(out, ldo, input, steps, m, columns, at, last);
  switch (M - m) {
    case 5: return tile<5, V>(out, ldo, input, steps, m, columns, at, last);
    case 4: return tile<4, V>(out, ldo, input, steps, m, columns, at, last);
    case 3: return tile<3, V>(out, ldo, input, steps, m, columns, at, last);
    case 2: return tile<2, V>(out, ldo, input, steps, m, columns, at, last);
    case 1: return tile<1, V>(out, ldo, input, steps, m, columns, at, last);
    default: return;
  }
}

template <int V>
void vectors(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n, int64_t n_end) {
  const int64_t steps = input.bf16_stride / kMatmulRowAlign, pairs = steps * kStepPairs;
  const uint32_t* columns[V];
  int64_t at[V];
  for (int v = 0; v < V; v++) {
    const int64_t column = n + v * kLanes;
    columns[v] = w.bf16_panels + (column / kWeightPanelColumns) * pairs * kWeightPanelColumns + column % kWeightPanelColumns;
    at[v] = column;
  }
  const int64_t rest = n_end - (n + (V - 1) * kLanes);
  const __mmask16 last = rest >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1u);
  rows<V>(out, w.rows, reinterpret_cast<const uint32_t*>(input.panels), steps, M, columns, at, last);
}

}  // namespace

void matmul_bf16_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                          int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; n += kVectors * kLanes) {
    switch ((smaller(n_end - n, kVectors * kLanes) + kLanes - 1) / kLanes) {
      case 1: vectors<1>(out, input, w, M, n, n_end); break;
      case 2: vectors<2>(out, input, w, M, n, n_end); break;
      case 3: vectors<3>(out, input, w, M, n, n_end); break;
      default: vectors<4>(out, input, w, M, n, n_end); break;
    }
  }
}

}  // namespace s3::cpu
