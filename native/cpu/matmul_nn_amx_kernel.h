// matmul_nn_amx_kernel.h: the amx level's C (+)= A·B of the trainer's BF16 products
// (matmul_nn_bf16.h), written once over a tile interface `Tiles` (cpu/amx_tiles.h on the hardware,
// matmul_amx_model.cpp's software model in the tests), like matmul_amx_kernel.h for the forward.
// Include only from files compiled with the AVX512-BF16 flags; internal linkage.
//
// Operands in the tile layout the driver packs (MatmulNnBf16Kernels::tiles): every tile one
// contiguous kilobyte, loaded with a 64-byte stride. An A tile is 16 rows × 32 values of k (a_row
// / 32 of them per 16 rows, M rounded up to 32 rows, zero past M and K); a B tile 16 pairs × 16
// columns (pair q holds B[2q][n], B[2q + 1][n] side by side: the layout TDPBF16PS reads), zero past
// K and N. Tiles 0–3 hold a 32 × 32 block of C (rows m, m + 16 × columns n, n + 16), tiles
// 4–5 its A, 6–7 its B: per step of 32 values of k, 4 loads feed 4 TDPBF16PS.
//
// Numerics: each C element starts from C (accumulate) or 0 and takes the steps of k in increasing
// order, in its tile, each step one TDPBF16PS over 16 pairs (products exact in f32, sums rounded to
// nearest even, BF16 subnormal inputs read as zero, subnormal sums flushed). The order depends only
// on K: not on M, on the 32 × 32 blocking, the super-columns, the chunks of k (C is written
// between them, exactly, in f32), the column split or the thread count, so a row gets the
// same bits in any batch. Rows and columns past M and past the caller's columns are computed on
// the zero padding and never stored.
#pragma once

#include <cstdint>

#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {
namespace {

constexpr int kNnAmxRows = 16;                    // rows of a tile, and a C or B tile's columns
constexpr int kNnAmxK = 32;                       // values of k per step (16 pairs)
// B's tiles for one super-column of C and one chunk of k stay in L2 while every block row of A
// passes over them: at most kNnAmxBBytes, with super-columns of 128 to 512 columns (64 bytes per
// column per step). Up to kNnAmxWholeKSteps steps (4,096 values of k: every layer's product) k
// is one chunk; past it (the LM head's K = vocabulary) chunks of kNnAmxChunkSteps, whose A block
// rows also stay near the core while the wide super-column passes.
constexpr int64_t kNnAmxBBytes = int64_t(1) << 20;
constexpr int64_t kNnAmxStepColumnBytes = kNnAmxK * 2;
constexpr int64_t kNnAmxNarrowest = 128, kNnAmxWidest = 512;
constexpr int64_t kNnAmxWholeKSteps = kNnAmxBBytes / (kNnAmxNarrowest * kNnAmxStepColumnBytes);
constexpr int64_t kNnAmxChunkSteps = 32;
constexpr int kNnAmxTileFloats = kNnAmxRows * kNnAmxRows;

inline int64_t nn_amx_smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// C rows [m, m + 16) × columns [n, n + 16): whole when both lie inside M and n_end.
inline bool nn_amx_whole(const MatmulNnBf16Args& p, int64_t m, int64_t n, int64_t n_end) {
  return m + kNnAmxRows <= p.M && n + kNnAmxRows <= n_end;
}

// Tile T ← C's block (rows m, columns n), from C itself or, at the edges, through `edge` (zeros
// past M and n_end).
template <int T, typename Tiles>
inline void nn_amx_load_c(Tiles& t, const MatmulNnBf16Args& p, int64_t m, int64_t n, int64_t n_end, float* edge) {
  if (nn_amx_whole(p, m, n, n_end)) {
    t.template load<T>(p.c + m * p.ldc + n, p.ldc * 4);
    return;
  }
  for (int r = 0; r < kNnAmxRows; r++) {
    for (int j = 0; j < kNnAmxRows; j++) {
      edge[r * kNnAmxRows + j] = m + r < p.M && n + j < n_end ? p.c[(m + r) * p.ldc + n + j] : 0.0f;
    }
  }
  t.template load<T>(edge, kNnAmxRows * 4);
}

// C's block (rows m, columns n) ← tile T, the parts inside M and n_end only.
template <int T, typename Tiles>
inline void nn_amx_store_c(Tiles& t, const MatmulNnBf16Args& p, int64_t m, int64_t n, int64_t n_end, float* edge) {
  if (nn_amx_whole(p, m, n, n_end)) {
    t.template store<T>(p.c + m * p.ldc + n, p.ldc * 4);
    return;
  }
  if (m >= p.M || n >= n_end) return;
  t.template store<T>(edge, kNnAmxRows * 4);
  const int64_t rows = nn_amx_smaller(kNnAmxRows, p.M - m), cols = nn_amx_smaller(kNnAmxRows, n_end - n);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < cols; j++) p.c[(m + r) * p.ldc + n + j] = edge[r * kNnAmxRows + j];
  }
}

// The 32 × 32 block of C at (m, n) over steps [s_begin, s_end) of k, continuing from C when it
// accumulates or an earlier chunk of k wrote it (C holds f32 exactly, so the chain is the same).
template <typename Tiles>
void nn_amx_block(Tiles& t, const MatmulNnBf16Args& p, int64_t m, int64_t n, int64_t n_end, int64_t s_begin,
                  int64_t s_end, float* edge) {
  if (p.accumulate || s_begin > p.first_step) {
    nn_amx_load_c<0>(t, p, m, n, n_end, edge);
    nn_amx_load_c<1>(t, p, m, n + kNnAmxRows, n_end, edge);
    nn_amx_load_c<2>(t, p, m + kNnAmxRows, n, n_end, edge);
    nn_amx_load_c<3>(t, p, m + kNnAmxRows, n + kNnAmxRows, n_end, edge);
  } else {
    t.template zero<0>();
    t.template zero<1>();
    t.template zero<2>();
    t.template zero<3>();
  }
  const int64_t panel = p.a_row / kNnAmxK * kMatmulNnTileValues;  // one 16-row (or 16-column) block's tiles
  const uint16_t* a0 = p.a + (m / kNnAmxRows) * panel;
  const uint16_t* a1 = a0 + panel;
  const int64_t b_panel = p.b_panel > 0 ? p.b_panel : panel;
  const uint16_t* b0 = p.b + (n / kNnAmxRows) * b_panel;
  const uint16_t* b1 = b0 + b_panel;
  for (int64_t s = s_begin; s < s_end; s++) {
    t.template load<4>(a0 + s * kMatmulNnTileValues, kNnAmxK * 2);
    t.template load<5>(a1 + s * kMatmulNnTileValues, kNnAmxK * 2);
    t.template load<6>(b0 + s * kMatmulNnTileValues, kNnAmxK * 2);
    t.template load<7>(b1 + s * kMatmulNnTileValues, kNnAmxK * 2);
    t.template dot<0, 4, 6>();
    t.template dot<1, 4, 7>();
    t.template dot<2, 5, 6>();
    t.template dot<3, 5, 7>();
  }
  nn_amx_store_c<0>(t, p, m, n, n_end, edge);
  nn_amx_store_c<1>(t, p, m, n + kNnAmxRows, n_end, edge);
  nn_amx_store_c<2>(t, p, m + kNnAmxRows, n, n_end, edge);
  nn_amx_store_c<3>(t, p, m + kNnAmxRows, n + kNnAmxRows, n_end, edge);
}

// Columns [n_begin, n_end) of C (n_begin a multiple of 32: the driver's units are 64 columns), in
// super-columns whose B chunk (kNnAmxBBytes) stays in L2 while every block row of A passes over it.
template <typename Tiles>
void nn_amx_columns(const MatmulNnBf16Args& p, int64_t n_begin, int64_t n_end) {
  Tiles t;
  t.configure();
  alignas(64) float edge[kNnAmxTileFloats];
  const int64_t steps = p.a_row / kNnAmxK;
  // K = 0 still passes once, writing C (0, or C itself when it accumulates).
  const int64_t passes_of_k = steps > 0 ? steps : 1;
  const int64_t chunk = passes_of_k <= kNnAmxWholeKSteps ? passes_of_k : kNnAmxChunkSteps;
  int64_t width = kNnAmxNarrowest;
  while (width < kNnAmxWidest && chunk * 2 * width * kNnAmxStepColumnBytes <= kNnAmxBBytes) width *= 2;
  for (int64_t ns = n_begin; ns < n_end; ns += width) {
    const int64_t ne = nn_amx_smaller(n_end, ns + width);
    for (int64_t s0 = p.first_step; s0 < passes_of_k; s0 += chunk) {
      const int64_t s1 = nn_amx_smaller(steps, s0 + chunk);
      for (int64_t m = 0; m < p.M; m += 2 * kNnAmxRows) {
        for (int64_t n = ns; n < ne; n += 2 * kNnAmxRows) nn_amx_block(t, p, m, n, n_end, s0, s1, edge);
      }
    }
  }
  t.release();
}

}  // namespace
}  // namespace s3::cpu
