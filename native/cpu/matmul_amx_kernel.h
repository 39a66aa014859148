// matmul_amx_kernel.h: the amx level's matmul for BF16 and FP8 weights, written once over a tile
// interface `Tiles` so that the same code runs on the hardware (matmul_amx.cpp: the AMX intrinsics)
// and on a software model of the tile registers (matmul_amx_model.cpp), which lets the tests check
// the blocking, packing, tails and FP8 scaling on CPUs without AMX. Include only from files compiled
// with the AVX512-BF16 flags; internal linkage, as in the other SIMD headers.
//
// out = x · Wᵀ is computed transposed, as C = W · xᵀ: the A operand is 16 weight rows × 32 values
// of k, the B operand 32 values of k × 16 input rows, from the tiles matmul.cpp packs once per call
// (MatmulInput::tiles). C tile (i, j) is output (input row j, weight row i), transposed into the
// output rows in registers. Tiles 0–3 hold a 2 × 2 block of C (32 weight rows × 32 input rows),
// tiles 4–5 the two weight panels' A, tiles 6–7 the two input groups' B: per step of k, 2 + 2 loads
// feed 4 TDPBF16PS.
//
// Where more than two groups of input rows pass over a pair of weight panels, the panels are first
// copied into scratch as whole tiles, one contiguous kilobyte per step of k (FP8 widened on the way):
// loaded from the checkpoint's rows instead, a tile's 16 rows lie K × 2 bytes apart, which maps them
// onto two sets of L1 (and a borrowed checkpoint row need not start on a cache line), so the panels
// fell out of L1 between the groups. With fewer groups (decode) each tile is read once, and straight
// from the rows (FP8 still through scratch, in the same tile layout).
//
// Numerics: each output is accumulated in its C tile over the steps of k in increasing order, by
// TDPBF16PS (products of BF16 values, exact in f32, added with round-to-nearest-even; BF16 subnormal
// inputs read as zero and subnormal sums are flushed to zero). FP8 weights are widened exactly to the
// BF16 values fp8 / 256 and each 128-wide k block is summed from zero in its tile, then added to the
// running sum as block × (scale × 256) with one f32 FMA, as the avx512bf16 level does. An output's
// order depends only on K: never on M, on which rows share its tile or on the thread split (a row's
// result is the same bits in any batch), because each C element sums only its own row of A and
// column of B. Weight rows past N and k past K are zeros in a scratch panel, input rows past M are
// zero rows of the packed tiles, and neither changes another element.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "cpu/fp8_to_bf16_avx512bf16.h"
#include "cpu/matmul.h"
#include "cpu/transpose16_avx512.h"

namespace s3::cpu {
namespace {

// This header uses no standard-library templates or inline library functions (see
// matmul_avx512bf16.cpp): every helper here has internal linkage.
inline int64_t amx_smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kAmxRows = int(kMatmulTileRows);  // rows of every tile; also a C or B tile's columns
constexpr int kAmxK = int(kMatmulTileK);        // BF16 values of k per A tile row (64 bytes)
constexpr int kAmxTileFloats = kAmxRows * kAmxRows;
constexpr int64_t kAmxBlockSteps = kFp8BlockSize / kAmxK;
static_assert(kFp8BlockSize % kAmxK == 0 && kFp8BlockSize % kAmxRows == 0, "scale blocks are whole tiles");
static_assert(kMatmulRowAlign == kAmxK, "the rounded input rows are whole steps of k");
static_assert(kMatmulScratchRows * 2 >= 2 * kAmxRows, "two 16-row BF16 panels fit the caller's scratch");

// 16 weight rows as BF16 A tiles: tile s (step s of k) at rows + s × step, its rows `stride`
// elements apart (the checkpoint's rows: step 32, stride K; or whole tiles packed in scratch: step
// 512, stride 32).
struct AmxPanel {
  const uint16_t* rows;
  int64_t step, stride;
};

constexpr int64_t kAmxTileValues = int64_t(kAmxRows) * kAmxK;  // BF16 values of one A tile

// Weight rows [n, n + 16) ∩ [0, N) as `steps` whole A tiles in `dst` (zero past N and past K).
inline AmxPanel pack_bf16_panel(const uint16_t* w, int64_t N, int64_t K, int64_t n, int64_t steps, uint16_t* dst) {
  for (int64_t r = 0; r < kAmxRows; r++) {
    uint16_t* out = dst + r * kAmxK;
    if (n + r >= N) {
      for (int64_t s = 0; s < steps; s++) _mm512_storeu_si512(out + s * kAmxTileValues, _mm512_setzero_si512());
      continue;
    }
    const uint16_t* src = w + (n + r) * K;
    for (int64_t s = 0, k = 0; s < steps; s++, k += kAmxK) {
      const __mmask32 mask = k < K ? value_mask(K - k) : __mmask32(0);
      _mm512_storeu_si512(out + s * kAmxTileValues, _mm512_maskz_loadu_epi16(mask, src + k));
    }
  }
  return {dst, kAmxTileValues, kAmxK};
}

inline AmxPanel widen_fp8_panel(const uint8_t* codes, int64_t N, int64_t K, int64_t n, int64_t steps, uint16_t* dst) {
  for (int64_t r = 0; r < kAmxRows; r++) {
    uint16_t* out = dst + r * kAmxK;
    if (n + r >= N) {
      for (int64_t s = 0; s < steps; s++) _mm512_storeu_si512(out + s * kAmxTileValues, _mm512_setzero_si512());
      continue;
    }
    const uint8_t* src = codes + (n + r) * K;
    for (int64_t s = 0, k = 0; s < steps; s++, k += kAmxK) {
      const __mmask32 mask = k < K ? value_mask(K - k) : __mmask32(0);
      _mm512_storeu_si512(out + s * kAmxTileValues, widen_fp8(_mm256_maskz_loadu_epi8(mask, src + k)));
    }
  }
  return {dst, kAmxTileValues, kAmxK};
}

// The kernel's view of one call.
struct AmxCall {
  float* out;
  const uint32_t* tiles;  // packed B tiles (MatmulInput::tiles)
  int64_t M, N, steps;    // steps of k = bf16_stride / 32
};

// B tile of input group g at step s, 64 bytes a row.
inline const uint32_t* b_tile(const AmxCall& call, int64_t g, int64_t s) {
  return call.tiles + (g * call.steps + s) * kAmxTileFloats;
}

// out[(16 g + j) × N + n + i] = c[i][j] for the rows and columns that exist: the 16 × 16 tile
// transposed in registers (transpose16_avx512.h), each output row one masked store.
inline void scatter_tile(const AmxCall& call, const float* c, int64_t n, int64_t n_end, int64_t g) {
  const int64_t rows = amx_smaller(kAmxRows, n_end - n), cols = amx_smaller(kAmxRows, call.M - g * kAmxRows);
  __m512 r[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_load_ps(c + 16 * i);
  transpose16x16(r);
  const __mmask16 mask = __mmask16((1u << rows) - 1);
  for (int64_t j = 0; j < cols; j++) _mm512_mask_storeu_ps(call.out + (g * kAmxRows + j) * call.N + n, mask, r[j]);
}

// One step of k for the P × G block: A tiles 4 + p, B tiles 6 + g, C tiles 2p + g.
template <int P, int G, typename Tiles>
inline void amx_step(Tiles& t, const AmxPanel (&panels)[2], const AmxCall& call, int64_t g0, int64_t s) {
  t.template load<4>(panels[0].rows + s * panels[0].step, panels[0].stride * 2);
  if constexpr (P == 2) t.template load<5>(panels[1].rows + s * panels[1].step, panels[1].stride * 2);
  t.template load<6>(b_tile(call, g0, s), kAmxRows * 4);
  if constexpr (G == 2) t.template load<7>(b_tile(call, g0 + 1, s), kAmxRows * 4);
  t.template dot<0, 4, 6>();
  if constexpr (G == 2) t.template dot<1, 4, 7>();
  if constexpr (P == 2) t.template dot<2, 5, 6>();
  if constexpr (P == 2 && G == 2) t.template dot<3, 5, 7>();
}

template <int P, int G, typename Tiles>
inline void amx_zero(Tiles& t) {
  t.template zero<0>();
  if constexpr (G == 2) t.template zero<1>();
  if constexpr (P == 2) t.template zero<2>();
  if constexpr (P == 2 && G == 2) t.template zero<3>();
}

// C tiles 2p + g into c[2p + g] (16 × 16 f32 each).
template <int P, int G, typename Tiles>
inline void amx_store(Tiles& t, float (&c)[4][kAmxTileFloats]) {
  t.template store<0>(c[0], kAmxRows * 4);
  if constexpr (G == 2) t.template store<1>(c[1], kAmxRows * 4);
  if constexpr (P == 2) t.template store<2>(c[2], kAmxRows * 4);
  if constexpr (P == 2 && G == 2) t.template store<3>(c[3], kAmxRows * 4);
}

// BF16 weights: P panels × G input groups, all steps of k accumulated in the C tiles.
template <int P, int G, typename Tiles>
void amx_bf16_block(Tiles& t, const AmxPanel (&panels)[2], const AmxCall& call, int64_t n, int64_t n_end, int64_t g0) {
  amx_zero<P, G>(t);
  for (int64_t s = 0; s < call.steps; s++) amx_step<P, G>(t, panels, call, g0, s);
  alignas(64) float c[4][kAmxTileFloats];
  amx_store<P, G>(t, c);
  for (int p = 0; p < P; p++) {
    for (int g = 0; g < G; g++) scatter_tile(call, c[2 * p + g], n + p * kAmxRows, n_end, g0 + g);
  }
}

// FP8 weights: each 128-wide k block summed from zero in the C tiles, then added to the running
// sums as block × (scale × 256); scales[p] is panel p's row of block scales.
template <int P, int G, typename Tiles>
void amx_fp8_block(Tiles& t, const AmxPanel (&panels)[2], const float* const (&scales)[2], const AmxCall& call, int64_t n,
                   int64_t n_end, int64_t g0) {
  alignas(64) float run[4][kAmxTileFloats];
  alignas(64) float c[4][kAmxTileFloats];
  for (int i = 0; i < 4; i++) {
    for (int e = 0; e < kAmxTileFloats; e += 16) _mm512_store_ps(run[i] + e, _mm512_setzero_ps());
  }
  for (int64_t block = 0, s = 0; s < call.steps; block++) {
    amx_zero<P, G>(t);
    for (int64_t step = 0; step < kAmxBlockSteps && s < call.steps; step++, s++) amx_step<P, G>(t, panels, call, g0, s);
    amx_store<P, G>(t, c);
    for (int p = 0; p < P; p++) {
      const __m512 scale = _mm512_set1_ps(scales[p][block] * 256.0f);
      for (int g = 0; g < G; g++) {
        float* r = run[2 * p + g];
        const float* b = c[2 * p + g];
        for (int e = 0; e < kAmxTileFloats; e += 16) {
          _mm512_store_ps(r + e, _mm512_fmadd_ps(_mm512_load_ps(b + e), scale, _mm512_load_ps(r + e)));
        }
      }
    }
  }
  for (int p = 0; p < P; p++) {
    for (int g = 0; g < G; g++) scatter_tile(call, run[2 * p + g], n + p * kAmxRows, n_end, g0 + g);
  }
}

// Every input group against P panels, two groups at a time.
template <int P, typename Block>
void amx_groups(const AmxCall& call, const Block& block) {
  const int64_t groups = (call.M + kAmxRows - 1) / kAmxRows;
  int64_t g = 0;
  for (; g + 2 <= groups; g += 2) block.template run<P, 2>(g);
  if (g < groups) block.template run<P, 1>(g);
}

template <typename Tiles>
struct AmxBf16Blocks {
  Tiles& t;
  const AmxPanel (&panels)[2];
  const AmxCall& call;
  int64_t n, n_end;
  template <int P, int G>
  void run(int64_t g0) const {
    amx_bf16_block<P, G>(t, panels, call, n, n_end, g0);
  }
};

template <typename Tiles>
struct AmxFp8Blocks {
  Tiles& t;
  const AmxPanel (&panels)[2];
  const float* const (&scales)[2];
  const AmxCall& call;
  int64_t n, n_end;
  template <int P, int G>
  void run(int64_t g0) const {
    amx_fp8_block<P, G>(t, panels, scales, call, n, n_end, g0);
  }
};

// Columns [n_begin, n_end) (n_begin a multiple of 16: matmul.cpp's thread units are whole tiles) of
// every input row, 32 weight rows at a time.
template <typename Tiles>
void amx_columns(Tiles& t, float* out, const MatmulInput& input, const MatrixView& view, int64_t M, int64_t n_begin,
                 int64_t n_end, float* scratch) {
  const int64_t K = view.cols, N = view.rows;
  const AmxCall call{out, input.tiles, M, N, input.bf16_stride / kAmxK};
  uint16_t* panel_scratch = reinterpret_cast<uint16_t*>(scratch);
  const int64_t steps = call.steps, groups = (M + kAmxRows - 1) / kAmxRows;
  t.configure();
  for (int64_t n = n_begin; n < n_end; n += 2 * kAmxRows) {
    const int P = n_end - n > kAmxRows ? 2 : 1;
    AmxPanel panels[2];
    if (view.dtype == DType::BF16) {
      const uint16_t* w = static_cast<const uint16_t*>(view.data);
      for (int p = 0; p < P; p++) {
        const int64_t first = n + p * kAmxRows;
        // Straight from the checkpoint when each tile is read once (two groups at most), all 16
        // rows exist and every step of k lies inside a row; else whole tiles in scratch.
        panels[p] = groups <= 2 && first + kAmxRows <= N && K % kAmxK == 0
                        ? AmxPanel{w + first * K, kAmxK, K}
                        : pack_bf16_panel(w, N, K, first, steps, panel_scratch + p * steps * kAmxTileValues);
      }
      if (P == 1) panels[1] = panels[0];
      const AmxBf16Blocks<Tiles> blocks{t, panels, call, n, n_end};
      if (P == 2) amx_groups<2>(call, blocks);
      else amx_groups<1>(call, blocks);
      continue;
    }
    const uint8_t* codes = static_cast<const uint8_t*>(view.data);
    const int64_t scale_cols = (K + kFp8BlockSize - 1) / kFp8BlockSize;
    const float* scales[2];
    for (int p = 0; p < P; p++) {
      const int64_t first = n + p * kAmxRows;
      panels[p] = widen_fp8_panel(codes, N, K, first, steps, panel_scratch + p * steps * kAmxTileValues);
      scales[p] = view.block_scales + (first / kFp8BlockSize) * scale_cols;
    }
    if (P == 1) panels[1] = panels[0], scales[1] = scales[0];
    const AmxFp8Blocks<Tiles> blocks{t, panels, scales, call, n, n_end};
    if (P == 2) amx_groups<2>(call, blocks);
    else amx_groups<1>(call, blocks);
  }
  t.release();
}

// The level's `columns`: BF16 and FP8 weights on tiles, F32 and F16 weights on the exact f32 path.
template <typename Tiles>
void amx_matmul_columns(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin,
                        int64_t n_end, float* scratch) {
  if (w.dtype != DType::BF16 && w.dtype != DType::F8_E4M3) {
    kMatmulAvx512.columns(out, input, w, M, n_begin, n_end, scratch);
    return;
  }
  Tiles tiles;
  amx_columns(tiles, out, input, w, M, n_begin, n_end, scratch);
}

}  // namespace
}  // namespace s3::cpu
