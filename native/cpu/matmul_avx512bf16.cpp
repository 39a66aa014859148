// AVX-512 BF16 matmul: the avx512bf16 level's kernels (compiled with the AVX-512 flags plus
// -mavx512bf16; called only after run-time detection).
//
// BF16 and FP8 weights are multiplied by the input rounded to BF16 (matmul.cpp rounds each row
// once per call, RNE) with VDPBF16PS: each of an accumulator's 16 f32 lanes adds the two products
// of one pair of k per instruction, so lane l sums the pairs at k ≡ 2l, 2l + 1 (mod 32) in
// increasing k, and the lanes are added by the same fixed tree as the AVX-512 kernels. A product
// of two BF16 values is exact in f32; the instruction treats BF16 subnormal inputs as zero and
// flushes subnormal results (neither occurs at the magnitudes of activations and weights).
//
// BF16 weights are read as they are stored, no conversion at all. FP8 e4m3 weights are widened,
// exactly, to BF16 values fp8 / 256 (with decode-sized M in registers as they stream, like the
// f32 kernels; from kConvertMinRows input rows on, a tile's rows once into scratch per block of
// input rows, as the widening costs more than the products it feeds), and the 128 × 128 block scale is
// applied in f32 per 128-wide k block: a block's pair sums are accumulated from zero, then the
// running sum += block sum × (scale × 256) with one FMA. So weights are never rounded, only the
// input is; and as widening is exact, both FP8 paths give the same bits.
//
// A register tile is kRows input rows × kCols weight rows (FP8: kScaledCols, as each output
// needs a block and a running accumulator). The input comes as panels (matmul.h): a tile's rows
// are one contiguous stream, 4 × 64 bytes per step. matmul.cpp hands a call at most one block of
// input rows that fits L2 (matmul_panel_block_rows), so the input is read from L2 rather than L3
// or DRAM while the weights stream past it, and each weight tile stays in L1 across the block's
// row tiles. Every element's order depends only on K, never on M, the block,
// the tile position or the thread split: a row's result is the same bits in any batch.
// F32 and F16 weights keep the exact f32 path of the AVX-512 level (kMatmulAvx512). BF16 and FP8
// weights packed into panels (MatrixView::bf16_panels, fp8_panels) go to the panel kernels
// (matmul_panels_avx512bf16.cpp): the weights this file reads as rows are those that carry none.
#include <immintrin.h>

#include "core/dtype.h"
#include "cpu/fp8_to_bf16_avx512bf16.h"
#include "cpu/matmul.h"
#include "cpu/matmul_lookahead.h"
#include "cpu/sum_lanes_avx512.h"
#include "cpu/weight_panels.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kStep = 32;        // values of k per VDPBF16PS (16 lanes × 2)
constexpr int kRows = 4;         // input rows per register tile (one panel)
constexpr int kPanelStep = kRows * kStep;  // BF16 values of one k step of a panel
constexpr int kCols = 6;         // BF16 weight rows per tile: 24 accumulators + 4 inputs + 1 weight ≤ 32 registers
constexpr int kScaledCols = 3;   // FP8: 12 block + 12 running accumulators + 4 inputs + 1 weight + 1 scale
constexpr int64_t kBlockSteps = kFp8BlockSize / kStep;
static_assert(kMatmulRowAlign == kStep, "the input rows are padded to whole steps");
static_assert(kMatmulPanelRows == kRows, "a panel is one register tile's input rows");
static_assert(kFp8BlockSize % kStep == 0, "a scale block is whole steps");
static_assert(kScaledCols <= kMatmulScratchRows, "a widened FP8 tile must fit the caller's scratch");
// From this many input rows on, an FP8 tile is widened into scratch once rather than per row tile.
constexpr int64_t kConvertMinRows = 2 * kRows;

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh>(v); }

// C weight rows as BF16, 32 values of k at a time (lanes outside `mask` read as 0): rows stored
// as BF16 (the checkpoint's, or FP8 rows widened into scratch), or FP8 rows widened as they load.
template <int C>
struct Bf16Rows {
  const uint16_t* p[C];
  __m512i load(int c, int64_t k) const { return _mm512_loadu_si512(p[c] + k); }
  __m512i load(int c, int64_t k, __mmask32 mask) const { return _mm512_maskz_loadu_epi16(mask, p[c] + k); }
};

template <int C>
struct Fp8Rows {
  const uint8_t* p[C];
  __m512i load(int c, int64_t k) const {
    return widen_fp8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p[c] + k)));
  }
  __m512i load(int c, int64_t k, __mmask32 mask) const { return widen_fp8(_mm256_maskz_loadu_epi8(mask, p[c] + k)); }
};

// One step over 32 values of k: `x` is this step of the input panel (rows padded with zeros, so
// they load whole); the weight rows load only the values in `mask` on the last, partial step (kTail).
template <bool kTail, int R, int C, typename Rows>
inline void dot_step(__m512 (&acc)[R][C], const uint16_t* x, const Rows& w, int64_t k, __mmask32 mask) {
  __m512i xv[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) xv[r] = _mm512_loadu_si512(x + r * kStep);
#pragma GCC unroll 8
  for (int c = 0; c < C; c++) {
    const __m512i wv = kTail ? w.load(c, k, mask) : w.load(c, k);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], as_bf16(xv[r]), as_bf16(wv));
  }
}

template <int R, int C>
inline void clear(__m512 (&acc)[R][C]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
  }
}

// out[m][c] = x[m] · w[c] for m < R, c < cols_valid, x the first R rows of a panel, BF16 weights as
// stored (rows of K values).
template <int R>
void dot_tile(const uint16_t* x, const Bf16Rows<kCols>& w, int64_t K, float* out, int64_t ldo, int cols_valid,
              const Lookahead& lookahead) {
  Lookahead ahead = lookahead;
  __m512 acc[R][kCols];
  clear(acc);
  int64_t k = 0;
  for (; k + kStep <= K; k += kStep, x += kPanelStep) {
    ahead.step();
    dot_step<false>(acc, x, w, k, 0);
  }
  if (k < K) dot_step<true>(acc, x, w, k, value_mask(K - k));
  store_row_sums(acc, out, ldo, cols_valid);
}

// The same for FP8 rows (widened in scratch or as they load), each 128-wide k block's sum scaled
// by its row's block scale × 256 into the running sum.
template <int R, typename Rows>
void dot_tile_scaled(const uint16_t* x, const Rows& w, const float* const (&scales)[kScaledCols], int64_t K,
                     float* out, int64_t ldo, int cols_valid, const Lookahead& lookahead) {
  Lookahead ahead = lookahead;
  __m512 run[R][kScaledCols];
  clear(run);
  for (int64_t block = 0, k = 0; k < K; block++) {
    __m512 acc[R][kScaledCols];
    clear(acc);
    for (int64_t step = 0; step < kBlockSteps && k < K; step++, k += kStep, x += kPanelStep) {
      ahead.step();
      if (k + kStep <= K) {
        dot_step<false>(acc, x, w, k, 0);
      } else {
        dot_step<true>(acc, x, w, k, value_mask(K - k));
      }
    }
#pragma GCC unroll 8
    for (int c = 0; c < kScaledCols; c++) {
      const __m512 scale = _mm512_set1_ps(scales[c][block] * 256.0f);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) run[r][c] = _mm512_fmadd_ps(acc[r][c], scale, run[r][c]);
    }
  }
  store_row_sums(run, out, ldo, cols_valid);
}

// One tile shape's work on the M input rows, a panel at a time, the last one's R < kRows rows as
// they are; the first row tile carries `ahead`.
// `tile.rows<R>(x, y, ahead)` computes R rows from panel x into y.
template <typename Tile>
void dot_rows(const MatmulInput& input, float* out, int64_t M, int64_t N, int64_t n, Lookahead ahead,
              const Tile& tile) {
  const int64_t panel_values = input.bf16_stride * kRows;
  for (int64_t m = 0; m < M; m += kRows) {
    const uint16_t* x = input.panels + (m / kRows) * panel_values;
    float* y = out + m * N + n;
    switch (smaller(kRows, M - m)) {
      case 4: tile.template rows<4>(x, y, ahead); break;
      case 3: tile.template rows<3>(x, y, ahead); break;
      case 2: tile.template rows<2>(x, y, ahead); break;
      default: tile.template rows<1>(x, y, ahead); break;
    }
    ahead = Lookahead{};
  }
}

struct Bf16Tile {
  Bf16Rows<kCols> w;
  int64_t K, ldo;
  int cols_valid;
  template <int R>
  void rows(const uint16_t* x, float* y, const Lookahead& ahead) const {
    dot_tile<R>(x, w, K, y, ldo, cols_valid, ahead);
  }
};

template <typename Rows>
struct Fp8Tile {
  Rows w;
  const float* scales[kScaledCols];
  int64_t K, ldo;
  int cols_valid;
  template <int R>
  void rows(const uint16_t* x, float* y, const Lookahead& ahead) const {
    dot_tile_scaled<R>(x, w, scales, K, y, ldo, cols_valid, ahead);
  }
};

void bf16_columns(float* out, const MatmulInput& input, const MatrixView& view, int64_t M, int64_t n_begin,
                  int64_t n_end) {
  const int64_t K = view.cols, N = view.rows;
  const uint16_t* weights = static_cast<const uint16_t*>(view.data);
  for (int64_t n = n_begin; n < n_end; n += kCols) {
    Bf16Tile tile{{}, K, N, int(smaller(kCols, n_end - n))};
    for (int c = 0; c < kCols; c++) tile.w.p[c] = weights + (n + smaller(c, tile.cols_valid - 1)) * K;
    dot_rows(input, out, M, N, n, next_weight_tile<DType::BF16>(view, n, n_end, kCols, kStep), tile);
  }
}

// Row `codes` (K values) widened into `row`, zero-padded to whole steps.
void widen_fp8_row(const uint8_t* codes, int64_t K, uint16_t* row) {
  for (int64_t k = 0; k < K; k += kStep) {
    _mm512_storeu_si512(row + k, widen_fp8(_mm256_maskz_loadu_epi8(value_mask(K - k), codes + k)));
  }
}

void fp8_columns(float* out, const MatmulInput& input, const MatrixView& view, int64_t M, int64_t n_begin,
                 int64_t n_end, float* scratch) {
  const int64_t K = view.cols, N = view.rows;
  const int64_t scale_cols = (K + kFp8BlockSize - 1) / kFp8BlockSize;
  const uint8_t* codes = static_cast<const uint8_t*>(view.data);
  uint16_t* widened = reinterpret_cast<uint16_t*>(scratch);
  for (int64_t n = n_begin; n < n_end; n += kScaledCols) {
    const int cols_valid = int(smaller(kScaledCols, n_end - n));
    const float* scales[kScaledCols];
    const uint8_t* rows[kScaledCols];
    for (int c = 0; c < kScaledCols; c++) {
      const int64_t row = n + smaller(c, cols_valid - 1);
      scales[c] = view.block_scales + (row / kFp8BlockSize) * scale_cols;
      rows[c] = codes + row * K;
    }
    const Lookahead ahead = next_weight_tile<DType::F8_E4M3>(view, n, n_end, kScaledCols, kStep);
    if (M < kConvertMinRows) {
      Fp8Tile<Fp8Rows<kScaledCols>> tile{{}, {}, K, N, cols_valid};
      for (int c = 0; c < kScaledCols; c++) tile.w.p[c] = rows[c], tile.scales[c] = scales[c];
      dot_rows(input, out, M, N, n, ahead, tile);
      continue;
    }
    // Widened once per call (at most one block of input rows): K values per weight row against
    // the block's M × K products.
    Fp8Tile<Bf16Rows<kScaledCols>> tile{{}, {}, K, N, cols_valid};
    for (int c = 0; c < kScaledCols; c++) {
      tile.scales[c] = scales[c];
      if (c < cols_valid) widen_fp8_row(rows[c], K, widened + c * input.bf16_stride);
      tile.w.p[c] = widened + smaller(c, cols_valid - 1) * input.bf16_stride;
    }
    dot_rows(input, out, M, N, n, ahead, tile);
  }
}

void matmul_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin,
                               int64_t n_end, float* scratch) {
  switch (w.dtype) {
    case DType::BF16:
      if (w.bf16_panels != nullptr) return matmul_bf16_panel_columns_avx512bf16(out, input, w, M, n_begin, n_end);
      return bf16_columns(out, input, w, M, n_begin, n_end);
    case DType::F8_E4M3:
      if (w.fp8_panels != nullptr) return matmul_fp8_panel_columns_avx512bf16(out, input, w, M, n_begin, n_end, scratch);
      return fp8_columns(out, input, w, M, n_begin, n_end, scratch);
    default: return kMatmulAvx512.columns(out, input, w, M, n_begin, n_end, scratch);  // F32, F16: exact f32
  }
}

}  // namespace

const MatmulKernels kMatmulAvx512Bf16 = {"avx512bf16", true, matmul_columns_avx512bf16, false, true, 48, true};

}  // namespace s3::cpu
