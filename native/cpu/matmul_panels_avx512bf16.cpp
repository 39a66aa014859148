// The avx512bf16 level's kernels for BF16 and FP8 weights packed into panels (weight_panels.h;
// compiled with the AVX-512 flags plus -mavx512bf16, called only after run-time detection).
//
// A register tile is up to kRows input rows × kVectors vectors of 16 output columns: per pair of
// k, kVectors loads of the panel's 64 bytes per vector and one broadcast of each row's input pair
// feed kRows × kVectors VDPBF16PS (24 accumulators + 4 weight vectors + 1 broadcast ≤ 32
// registers). For BF16 weights each output is one accumulator, starting at zero and adding the
// pairs of k in increasing order, one VDPBF16PS per pair. FP8 weights are widened, exactly, to the
// BF16 values fp8 / 256 (fp8_to_bf16_avx512bf16.h), one 128-wide block of k of a panel at a time,
// in registers for decode-sized M, else into the caller's scratch (16 KiB, read from L1 by every
// row tile); each output's block sum is such a chain over the block's pairs, and out holds the
// running sum: the first block's sum times its scale × 256 (a fused multiply-add onto zero), each
// later block's added by a fused multiply-add. Either way the order depends only on K, never on M, the tile, the column split or
// the thread count, so a row's result is the same bits in any batch, prefill or decode. The input
// comes as matmul.cpp's BF16 panels (matmul.h, MatmulInput::panels), read one pair per broadcast.
#include <immintrin.h>

#include "cpu/fp8_to_bf16_avx512bf16.h"
#include "cpu/matmul.h"
#include "cpu/weight_panels.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
constexpr int kRows = 6;
constexpr int kVectors = 4;
// Rows of a tile that widens FP8 codes as it loads them: 16 accumulators, 4 weight vectors, a
// broadcast and the widening's temporaries within 32 registers.
constexpr int kCodeRows = 4;
// FP8 weights are widened as they load up to this many input rows (two tiles of kCodeRows, each
// widening the block again), into scratch once per block from more on: with the 0.6B shapes at 2
// threads on Zen 4 (bench/matmul_bench.cpp, `panels`), 8 rows in registers ran 1.16-1.17x the
// rows kernel where 8 rows through scratch ran 0.89-1.06x.
constexpr int64_t kCodeMaxRows = 2 * kCodeRows;
constexpr int kStepPairs = kMatmulRowAlign / 2;                 // pairs of k per panel step of the input
constexpr int kInputStepDwords = kMatmulPanelRows * kStepPairs;  // one step of an input panel, every row
constexpr int64_t kBlockSteps = kFp8BlockSize / kMatmulRowAlign;  // input steps per FP8 scale block
static_assert(kWeightPanelColumns == kLanes * kVectors, "a weight panel is one tile's columns");
static_assert(kFp8BlockSize % kMatmulRowAlign == 0, "a scale block is whole steps");
static_assert(kWeightPanelColumns <= kFp8BlockSize && kFp8BlockSize % kWeightPanelColumns == 0,
              "a weight panel lies in one row block of scales");
static_assert(kBlockSteps * kStepPairs * kWeightPanelColumns <= kMatmulScratchMinFloats,
              "a widened block of a panel fits the caller's scratch");

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh>(v); }

// How a tile's sums reach out (one vector of 16 columns, the lanes past `mask` untouched): stored
// (BF16 weights: one chain over every pair of k), or added times a block's scale to the running sum
// out holds (FP8 weights: one chain per block; the first block's onto zero).
struct Store {
  void operator()(float* to, __m512 sum, __mmask16 mask) const { _mm512_mask_storeu_ps(to, mask, sum); }
};
struct AddScaled {
  __m512 scale;
  bool first;
  void operator()(float* to, __m512 sum, __mmask16 mask) const {
    const __m512 running = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, to);
    _mm512_mask_storeu_ps(to, mask, _mm512_fmadd_ps(sum, scale, running));
  }
};

// Where a tile's V vectors of weight pairs come from: pair p (counted from the tile's first) of
// vector v, as 16 dwords of BF16 pairs. BF16 panels, and FP8 blocks widened into scratch, are read
// as they are (64 dwords per pair); FP8 panels (64 code pairs per pair) are widened as they load.
template <int V>
struct PanelDwords {
  const uint32_t* columns[V];
  __m512i load(int v, int64_t p) const { return _mm512_loadu_si512(columns[v] + p * kWeightPanelColumns); }
};
template <int V>
struct PanelCodes {
  const uint16_t* columns[V];
  __m512i load(int v, int64_t p) const {
    return widen_fp8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(columns[v] + p * kWeightPanelColumns)));
  }
};

// Rows [m, m + R) × V vectors of weight columns (their pairs from `weights`, the first that of input
// step s_begin), summed over input steps [s_begin, s_end) and handed to `put` at out's vector
// offsets `at[v]` (rows ldo apart), the last masked to `last`.
template <int R, int V, typename Weights, typename Put>
void tile(float* out, int64_t ldo, const uint32_t* input, int64_t steps, int64_t s_begin, int64_t s_end, int64_t m,
          const Weights& weights, const int64_t (&at)[V], __mmask16 last, const Put& put) {
  const uint32_t* row[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    const int64_t i = m + r;
    row[r] = input + (i / kMatmulPanelRows) * steps * kInputStepDwords + (i % kMatmulPanelRows) * kStepPairs;
  }
  __m512 acc[R][V];
#pragma GCC unroll 32
  for (int x = 0; x < R * V; x++) acc[x / V][x % V] = _mm512_setzero_ps();
  for (int64_t s = s_begin; s < s_end; s++) {
    const int64_t first = (s - s_begin) * kStepPairs;
    for (int j = 0; j < kStepPairs; j++) {
      __m512i w[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) w[v] = weights.load(v, first + j);
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
    for (int v = 0; v < V; v++) put(out + (m + r) * ldo + at[v], acc[r][v], v == V - 1 ? last : __mmask16(0xFFFF));
  }
}

// Every row of M in tiles of up to `Rows` rows.
template <int Rows, int V, typename Weights, typename Put>
void rows(float* out, int64_t ldo, const uint32_t* input, int64_t steps, int64_t s_begin, int64_t s_end, int64_t M,
          const Weights& weights, const int64_t (&at)[V], __mmask16 last, const Put& put) {
  int64_t m = 0;
  for (; m + Rows <= M; m += Rows) tile<Rows, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
  if constexpr (Rows > 5) {
    if (M - m == 5) return tile<5, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
  }
  switch (M - m) {
    case 4: return tile<4, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
    case 3: return tile<3, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
    case 2: return tile<2, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
    case 1: return tile<1, V>(out, ldo, input, steps, s_begin, s_end, m, weights, at, last, put);
    default: return;
  }
}

// The mask of the last of V vectors of columns from n (n_end excluded).
template <int V>
__mmask16 last_vector_mask(int64_t n, int64_t n_end) {
  const int64_t rest = n_end - (n + (V - 1) * kLanes);
  return rest >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1u);
}

// Where `column` starts in panels of `pairs` pairs (64 places per pair).
template <typename Place>
const Place* panel_column(const Place* panels, int64_t pairs, int64_t column) {
  return panels + (column / kWeightPanelColumns) * pairs * kWeightPanelColumns + column % kWeightPanelColumns;
}

template <int V>
void bf16_vectors(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n, int64_t n_end) {
  const int64_t steps = input.bf16_stride / kMatmulRowAlign, pairs = steps * kStepPairs;
  PanelDwords<V> weights;
  int64_t at[V];
  for (int v = 0; v < V; v++) {
    const int64_t column = n + v * kLanes;
    weights.columns[v] = panel_column(w.bf16_panels, pairs, column);
    at[v] = column;
  }
  rows<kRows, V>(out, w.rows, reinterpret_cast<const uint32_t*>(input.panels), steps, 0, steps, M, weights, at,
                 last_vector_mask<V>(n, n_end), Store{});
}

// V vectors of columns from n, all in one panel (so under one row block of scales), of FP8 weights,
// a 128-wide block of k at a time, every row tile's block sums added scaled to out. Up to
// kCodeMaxRows rows (decode), each row tile widens the codes as it loads them; from more rows on,
// the block's pairs of those columns are widened once into `widened` (64 dwords per pair, as in a
// BF16 panel) for all the row tiles to read. Widening is exact: both give the same bits.
template <int V>
void fp8_vectors(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n, int64_t n_end,
                 uint32_t* widened) {
  const int64_t steps = input.bf16_stride / kMatmulRowAlign, pairs = steps * kStepPairs;
  const uint32_t* x = reinterpret_cast<const uint32_t*>(input.panels);
  // MatrixView::scale_cols() spelled out: an inline member used here could be the copy the linker
  // keeps for baseline code (see smaller() above).
  const int64_t scale_cols = (w.cols + kFp8BlockSize - 1) / kFp8BlockSize;
  const float* scales = w.block_scales + (n / kFp8BlockSize) * scale_cols;
  PanelCodes<V> codes;
  PanelDwords<V> scratch;
  int64_t at[V];
  for (int v = 0; v < V; v++) {
    const int64_t column = n + v * kLanes;
    codes.columns[v] = panel_column(w.fp8_panels, pairs, column);
    scratch.columns[v] = widened + v * kLanes;
    at[v] = column;
  }
  const __mmask16 last = last_vector_mask<V>(n, n_end);
  for (int64_t block = 0, s_begin = 0; s_begin < steps; block++, s_begin += kBlockSteps) {
    const int64_t s_end = smaller(steps, s_begin + kBlockSteps), q_begin = s_begin * kStepPairs;
    const AddScaled put{_mm512_set1_ps(scales[block] * 256.0f), block == 0};
    PanelCodes<V> block_codes = codes;
    for (int v = 0; v < V; v++) block_codes.columns[v] += q_begin * kWeightPanelColumns;
    if (M <= kCodeMaxRows) {
      rows<kCodeRows, V>(out, w.rows, x, steps, s_begin, s_end, M, block_codes, at, last, put);
      continue;
    }
    for (int64_t p = 0; p < (s_end - s_begin) * kStepPairs; p++) {
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) _mm512_storeu_si512(widened + p * kWeightPanelColumns + v * kLanes, block_codes.load(v, p));
    }
    rows<kRows, V>(out, w.rows, x, steps, s_begin, s_end, M, scratch, at, last, put);
  }
}

}  // namespace

void matmul_bf16_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                          int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; n += kVectors * kLanes) {
    switch ((smaller(n_end - n, kVectors * kLanes) + kLanes - 1) / kLanes) {
      case 1: bf16_vectors<1>(out, input, w, M, n, n_end); break;
      case 2: bf16_vectors<2>(out, input, w, M, n, n_end); break;
      case 3: bf16_vectors<3>(out, input, w, M, n, n_end); break;
      default: bf16_vectors<4>(out, input, w, M, n, n_end); break;
    }
  }
}

void matmul_fp8_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                         int64_t n_begin, int64_t n_end, float* scratch) {
  uint32_t* widened = reinterpret_cast<uint32_t*>(scratch);
  // Vectors up to the end of n's panel: a chunk of columns that does not start on a panel (a pass
  // fused with weights that carry none) takes its panels' parts in turn.
  for (int64_t n = n_begin, next = 0; n < n_end; n = next) {
    next = smaller(n_end, (n / kWeightPanelColumns + 1) * kWeightPanelColumns);
    switch ((next - n + kLanes - 1) / kLanes) {
      case 1: fp8_vectors<1>(out, input, w, M, n, next, widened); break;
      case 2: fp8_vectors<2>(out, input, w, M, n, next, widened); break;
      case 3: fp8_vectors<3>(out, input, w, M, n, next, widened); break;
      default: fp8_vectors<4>(out, input, w, M, n, next, widened); break;
    }
  }
}

}  // namespace s3::cpu
