// AVX-512 BF16 C (+)= A·B on packed BF16 operands (matmul_nn_bf16.h; compiled with the AVX-512
// flags plus -mavx512bf16, called only after run-time detection).
//
// The scheme of matmul_nn_avx512.cpp with k pairs in place of k: a register tile of up to kRows
// rows × kVectors 16-column vectors of C; per k pair, kVectors loads of B's pairs (16 columns × 2
// BF16 each) and kRows broadcasts of A's pair (one 32-bit word) feed kRows × kVectors VDPBF16PS
// (24 accumulators + 4 B vectors + 1 broadcast ≤ 32 registers). B comes in 64-column panels, each
// contiguous along k (128 values per pair), and an A read transposed in blocks of 16 rows, each
// contiguous along k, so a tile's loads walk runs of memory rather than rows 2N (or 2M) values
// apart, which for N a multiple of 1,024 fall on a few L1 sets and evict each other. k pairs go in
// blocks of kBlockPairs so a panel's block (512 pairs × 64 columns, 128 KiB) stays in L2 while
// the row tiles pass over it (256 and 128 pairs measured slower on Zen 4); a tile reloads C
// between blocks, which leaves each element's single chain over the pairs in increasing k unchanged.
// A's rows go in chunks of at most kChunkBytes (half the 1 MiB L2 of Zen 4 and Zen 5), and every
// panel of the thread's columns passes over a chunk before the next, so A comes from memory once
// rather than once per panel: a weight gradient's tall A (3,072 rows, or the LM head's 151,936)
// no longer streams from DRAM 8 or 16 times (docs/benchmarks.md, "Row chunks of A in L2"). Up to
// K = 4,096 a chunk spans all of K and C's strip stays in L2 across the blocks; past it a chunk
// spans one block and each block passes over all of C.
#include <immintrin.h>

#include "cpu/f32_to_bf16_avx512.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/transpose16_avx512.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
constexpr int kRows = 6;
constexpr int kVectors = 4;
constexpr int64_t kPanel = kLanes * kVectors;
static_assert(kPanel == kMatmulNnPanelColumns, "a register tile spans one panel of B");
constexpr int64_t kBlockPairs = 512;
constexpr int64_t kChunkBytes = int64_t(512) << 10;
// Up to this many pairs of k, A's chunks span all of K (below).
constexpr int64_t kWholeKPairs = 2048;

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh>(v); }

// Pair 0 of the 16 columns from column n (n a multiple of 16) in B's panels: panel n / 64, whose
// pair q lies p.ldb values further on.
inline const uint16_t* panel_columns(const MatmulNnBf16Args& p, int64_t n) {
  return p.b + (n / kMatmulNnPanelColumns) * p.b_panel + 2 * (n % kMatmulNnPanelColumns);
}

// Pair 0 of A's row i: block i / 16 (a_block values apart; 0: the rows one after another), row
// i mod 16 of it.
inline const uint16_t* a_row_start(const MatmulNnBf16Args& p, int64_t i) {
  const int64_t block = p.a_block > 0 ? p.a_block : kMatmulNnRowBlock * p.a_row;
  return p.a + (i / kMatmulNnRowBlock) * block + (i % kMatmulNnRowBlock) * p.a_row;
}

// Rows [i, i + R) × vectors [n, n + V·16) of C over the pairs [q0, q1); the last vector's store is
// masked to `last` when kMaskLast (B's panels are zero past N, so its loads need no mask).
template <int R, int V, bool kMaskLast>
void tile(const MatmulNnBf16Args& p, int64_t i, int64_t n, int64_t q0, int64_t q1, bool load_c, __mmask16 last) {
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
  const uint16_t* columns[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; v++) columns[v] = panel_columns(p, n + v * kLanes);
  const uint16_t* rows[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) rows[r] = a_row_start(p, i + r);
  for (int64_t q = q0; q < q1; q++) {
    __m512i bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) bv[v] = _mm512_loadu_si512(columns[v] + q * p.ldb);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m512i av = _mm512_broadcastd_epi32(_mm_loadu_si32(rows[r] + q * p.a_pair));
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], as_bf16(av), as_bf16(bv[v]));
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

// Rows [i0, i1) of C for one panel of V vectors and one block of pairs.
template <int V, bool kMaskLast>
void panel(const MatmulNnBf16Args& p, int64_t i0, int64_t i1, int64_t n, int64_t q0, int64_t q1, bool load_c, __mmask16 last) {
  int64_t i = i0;
  for (; i + kRows <= i1; i += kRows) tile<kRows, V, kMaskLast>(p, i, n, q0, q1, load_c, last);
  switch (i1 - i) {
    case 5: tile<5, V, kMaskLast>(p, i, n, q0, q1, load_c, last); break;
    case 4: tile<4, V, kMaskLast>(p, i, n, q0, q1, load_c, last); break;
    case 3: tile<3, V, kMaskLast>(p, i, n, q0, q1, load_c, last); break;
    case 2: tile<2, V, kMaskLast>(p, i, n, q0, q1, load_c, last); break;
    case 1: tile<1, V, kMaskLast>(p, i, n, q0, q1, load_c, last); break;
    default: break;
  }
}

template <bool kMaskLast>
void panel_any(int vectors, const MatmulNnBf16Args& p, int64_t i0, int64_t i1, int64_t n, int64_t q0, int64_t q1,
               bool load_c, __mmask16 last) {
  switch (vectors) {
    case 1: return panel<1, kMaskLast>(p, i0, i1, n, q0, q1, load_c, last);
    case 2: return panel<2, kMaskLast>(p, i0, i1, n, q0, q1, load_c, last);
    case 3: return panel<3, kMaskLast>(p, i0, i1, n, q0, q1, load_c, last);
    default: return panel<4, kMaskLast>(p, i0, i1, n, q0, q1, load_c, last);
  }
}

// Rows [i0, i1) × the columns from n of C (up to a panel, and up to n_end) over the pairs [q0, q1).
void panel_block(const MatmulNnBf16Args& p, int64_t i0, int64_t i1, int64_t n, int64_t n_end, int64_t q0, int64_t q1) {
  const int64_t width = smaller(kPanel, n_end - n);
  const int vectors = int((width + kLanes - 1) / kLanes);
  const int64_t rest = width % kLanes;
  const __mmask16 last = rest == 0 ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1u);
  const bool load_c = p.accumulate || q0 > 0;
  if (rest == 0) {
    panel_any<false>(vectors, p, i0, i1, n, q0, q1, load_c, last);
  } else {
    panel_any<true>(vectors, p, i0, i1, n, q0, q1, load_c, last);
  }
}

// Rows of A per chunk, its rows `pairs` pairs long: as many as fit in kChunkBytes, at least 48 (a
// whole number of register tiles and of A's 16-row blocks), then spread evenly over the chunks M
// needs, rounded up to whole register tiles.
int64_t chunk_rows(int64_t M, int64_t pairs) {
  const int64_t fit = kChunkBytes / (pairs * 4);
  const int64_t rows = fit < 48 ? 48 : fit / 48 * 48;
  const int64_t chunks = (M + rows - 1) / rows;
  const int64_t even = (M + chunks - 1) / chunks;
  return (even + kRows - 1) / kRows * kRows;
}

void matmul_nn_bf16_columns_avx512bf16(const MatmulNnBf16Args& p, int64_t n_begin, int64_t n_end) {
  const int64_t pairs = (p.K + 1) / 2;
  if (pairs <= 0) {  // C = 0 (or unchanged when accumulating)
    if (p.accumulate) return;
    for (int64_t n = n_begin; n < n_end; n += kPanel) panel_block(p, 0, p.M, n, n_end, 0, 0);
    return;
  }
  if (pairs <= kWholeKPairs) {
    // Chunks over all of K: each panel takes a chunk's rows through every block before the next
    // panel, so the chunk's strip of C stays in L2 between blocks too.
    const int64_t chunk = chunk_rows(p.M, pairs);
    for (int64_t i0 = 0; i0 < p.M; i0 += chunk) {
      const int64_t i1 = smaller(p.M, i0 + chunk);
      for (int64_t n = n_begin; n < n_end; n += kPanel) {
        for (int64_t q0 = 0; q0 < pairs; q0 += kBlockPairs) panel_block(p, i0, i1, n, n_end, q0, smaller(pairs, q0 + kBlockPairs));
      }
    }
    return;
  }
  // Longer K (the LM head's dh, K = 151,936): chunks of one block, every block over all of C, so
  // B's panels come from memory once rather than once per chunk.
  for (int64_t q0 = 0; q0 < pairs; q0 += kBlockPairs) {
    const int64_t q1 = smaller(pairs, q0 + kBlockPairs);
    const int64_t chunk = chunk_rows(p.M, q1 - q0);
    for (int64_t i0 = 0; i0 < p.M; i0 += chunk) {
      const int64_t i1 = smaller(p.M, i0 + chunk);
      for (int64_t n = n_begin; n < n_end; n += kPanel) panel_block(p, i0, i1, n, n_end, q0, q1);
    }
  }
}

}  // namespace

// 16 columns at a time: the even row's BF16 in each 32-bit word's low half, the odd row's in its
// high half, which is the pair layout with no shuffle.
void matmul_nn_pack_pairs_avx512bf16(const float* even, const float* odd, int64_t n, uint16_t* out) {
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 mask = n - j >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1u);
    const __m512i low = f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, even + j)));
    const __m512i high = odd == nullptr ? _mm512_setzero_si512()
                                        : f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, odd + j)));
    _mm512_mask_storeu_epi32(out + 2 * j, mask, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
  }
}

void matmul_nn_pack_transposed_block_avx512bf16(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps,
                                                uint16_t* tiles) {
  const __mmask16 mask = rows >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (rows > 0 ? rows : 0)) - 1u);
  for (int64_t s = 0; s < steps; s++) {
    // r[q] = the pairs (k, k + 1), k = 32 s + 2q, of the 16 rows (one 32-bit word per row); then
    // transposed, r[i] = row i's 16 pairs: that row of the tile.
    __m512 r[16];
    for (int q = 0; q < 16; q++) {
      const int64_t k = 32 * s + 2 * q;
      const __m512i low = k < K ? f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, src + k * ld)))
                                : _mm512_setzero_si512();
      const __m512i high = k + 1 < K ? f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, src + (k + 1) * ld)))
                                     : _mm512_setzero_si512();
      r[q] = _mm512_castsi512_ps(_mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
    }
    transpose16x16(r);
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(reinterpret_cast<float*>(tiles + s * kMatmulNnTileValues + i * kMatmulNnTileK), r[i]);
  }
}

// The mask of the first `count` of 16 lanes (none when count ≤ 0).
static inline __mmask16 first_lanes(int64_t count) {
  return count >= kLanes ? __mmask16(0xFFFF) : count > 0 ? __mmask16((1u << count) - 1u) : __mmask16(0);
}

// The permutation that gathers the rounded halves of a step in order: word i of the (low, high)
// pair holds value k = i, the low 16 bits of lane i of `low` for i < 16 (word 2i), of lane i − 16
// of `high` past it (word 32 + 2(i − 16)).
static inline __m512i step_word_order() {
  alignas(64) int16_t order[32];
  for (int i = 0; i < 32; i++) order[i] = int16_t(2 * i);
  return _mm512_load_si512(order);
}

// row[0, 32), zero from `count` on, rounded as f32_to_bf16: the 32 BF16 values in order in one vector.
static inline __m512i rounded_step(const float* row, int64_t count, __m512i order) {
  const __m512i low = f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(first_lanes(count), row)));
  const __m512i high = f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(first_lanes(count - kLanes), row + kLanes)));
  return _mm512_permutex2var_epi16(low, order, high);
}

void matmul_nn_pack_rows_as_b_block_avx512bf16(const float* w, int64_t ldw, int64_t K, int64_t rows, int64_t steps,
                                               uint16_t* tiles) {
  const __m512i order = step_word_order();
  for (int64_t s = 0; s < steps; s++) {
    const int64_t k0 = 32 * s;
    // r[j] = W row j's 16 pairs of this step (one 32-bit word each); then transposed, r[q] = pair q
    // of the 16 rows: row q of the tile.
    __m512 r[16];
    for (int j = 0; j < 16; j++) {
      r[j] = j < rows ? _mm512_castsi512_ps(rounded_step(w + j * ldw + k0, K - k0, order)) : _mm512_setzero_ps();
    }
    transpose16x16(r);
    for (int q = 0; q < 16; q++) _mm512_storeu_ps(reinterpret_cast<float*>(tiles + s * kMatmulNnTileValues + q * kMatmulNnTileK), r[q]);
  }
}

void matmul_nn_pack_rows_as_b_panel_avx512bf16(const float* w, int64_t ldw, int64_t K, int64_t rows, uint16_t* panel) {
  const __m512i order = step_word_order();
  const int64_t pairs = (K + 1) / 2;
  for (int64_t g = 0; g < kMatmulNnPanelColumns / kLanes; g++) {  // the panel's 16-column groups
    const float* group = w + g * kLanes * ldw;
    const int64_t group_rows = rows - g * kLanes;
    for (int64_t s = 0; s * kLanes < pairs; s++) {
      const int64_t k0 = 32 * s;
      // r[j] = W row j's 16 pairs of this step (one 32-bit word each); then transposed, r[q] = pair
      // 16s + q of the group's 16 rows: that pair row's 16 columns of the panel.
      __m512 r[16];
      for (int j = 0; j < 16; j++) {
        r[j] = j < group_rows ? _mm512_castsi512_ps(rounded_step(group + j * ldw + k0, K - k0, order)) : _mm512_setzero_ps();
      }
      transpose16x16(r);
      const int64_t count = smaller(kLanes, pairs - s * kLanes);
      uint16_t* out = panel + s * kLanes * 2 * kMatmulNnPanelColumns + g * 2 * kLanes;
      for (int q = 0; q < count; q++) _mm512_storeu_ps(reinterpret_cast<float*>(out + q * 2 * kMatmulNnPanelColumns), r[q]);
    }
  }
}

void matmul_nn_pack_rows_block_avx512bf16(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps,
                                          uint16_t* tiles) {
  const __m512i order = step_word_order();
  for (int64_t r = 0; r < kLanes; r++) {
    uint16_t* out = tiles + r * kMatmulNnTileK;
    if (r >= rows) {
      for (int64_t s = 0; s < steps; s++) _mm512_storeu_si512(out + s * kMatmulNnTileValues, _mm512_setzero_si512());
      continue;
    }
    const float* row = src + r * ld;
    for (int64_t s = 0; s < steps; s++) _mm512_storeu_si512(out + s * kMatmulNnTileValues, rounded_step(row + 32 * s, K - 32 * s, order));
  }
}

void matmul_nn_pack_pairs_into_tiles_avx512bf16(const float* even, const float* odd, int64_t n, uint16_t* out,
                                                int64_t stride) {
  for (int64_t j = 0; j < n; j += kLanes, out += stride) {
    const __mmask16 mask = first_lanes(n - j);
    const __m512i low = f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, even + j)));
    const __m512i high = odd == nullptr ? _mm512_setzero_si512()
                                        : f32_to_bf16_lanes(_mm512_castps_si512(_mm512_maskz_loadu_ps(mask, odd + j)));
    _mm512_storeu_si512(out, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
  }
}

void matmul_nn_transpose_a_tile_avx512bf16(const uint16_t* top, const uint16_t* bottom, int64_t column, uint16_t* out) {
  // z[j] = row j of both blocks: `top`'s 16 values in its low 256 bits, `bottom`'s in its high.
  // Per 128-bit quarter (8 values of one block's row), three rounds of interleaving (16-, 32-, then
  // 64-bit units) leave y[2c + h] holding, in quarter e, rows 8h … 8h + 7 of column c + 8·(e mod 2)
  // of the block of that half.
  __m512i z[16], t[16];
  for (int j = 0; j < 16; j++) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(top + j * kMatmulNnTileK + column));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bottom + j * kMatmulNnTileK + column));
    z[j] = _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
  }
  for (int k = 0; k < 8; k++) {  // t[k]: columns 0–3 of rows 2k, 2k + 1 as 32-bit pairs; t[8 + k]: columns 4–7
    t[k] = _mm512_unpacklo_epi16(z[2 * k], z[2 * k + 1]);
    t[8 + k] = _mm512_unpackhi_epi16(z[2 * k], z[2 * k + 1]);
  }
  for (int g = 0; g < 2; g++) {  // z[8g + 2k + 0/1]: columns 4g + 0–1 / 4g + 2–3 of rows 4k … 4k + 3
    for (int k = 0; k < 4; k++) {
      z[8 * g + 2 * k] = _mm512_unpacklo_epi32(t[8 * g + 2 * k], t[8 * g + 2 * k + 1]);
      z[8 * g + 2 * k + 1] = _mm512_unpackhi_epi32(t[8 * g + 2 * k], t[8 * g + 2 * k + 1]);
    }
  }
  for (int c = 0; c < 8; c++) {  // t[2c + h]: column c, rows 8h … 8h + 7
    const int g = c / 4, e = c % 4;  // z[8g + 2k + e / 2] holds column 4g + e in 64-bit unit e % 2
    for (int h = 0; h < 2; h++) {
      const __m512i x0 = z[8 * g + 2 * (2 * h) + e / 2], x1 = z[8 * g + 2 * (2 * h + 1) + e / 2];
      t[2 * c + h] = e % 2 == 0 ? _mm512_unpacklo_epi64(x0, x1) : _mm512_unpackhi_epi64(x0, x1);
    }
  }
  // Output row c (c < 8): quarter 0 of t[2c], t[2c + 1], then quarter 2 of each; row 8 + c: quarters 1 and 3.
  const __m512i low_columns = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i high_columns = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  for (int c = 0; c < 8; c++) {
    _mm512_storeu_si512(out + c * kMatmulNnTileK, _mm512_permutex2var_epi64(t[2 * c], low_columns, t[2 * c + 1]));
    _mm512_storeu_si512(out + (8 + c) * kMatmulNnTileK, _mm512_permutex2var_epi64(t[2 * c], high_columns, t[2 * c + 1]));
  }
}

void matmul_nn_pair_tile_row_from_a_rows_avx512bf16(const uint16_t* even, const uint16_t* odd, int64_t blocks, uint16_t* row,
                                                    int64_t block_stride) {
  for (int64_t c = 0; c < blocks; c++, row += block_stride) {
    // Block c: half c mod 2 of step c / 2; each value widened into a 32-bit word, the odd row's
    // shifted into its high half: the pair layout.
    const int64_t at = (c / 2) * kMatmulNnTileValues + (c % 2) * kLanes;
    const __m512i low = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(even + at)));
    const __m512i high = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(odd + at)));
    _mm512_storeu_si512(row, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
  }
}

const MatmulNnBf16Kernels kMatmulNnAvx512Bf16 = {"avx512bf16",
                                                 matmul_nn_bf16_columns_avx512bf16,
                                                 matmul_nn_pack_pairs_avx512bf16,
                                                 false,
                                                 nullptr,
                                                 nullptr,
                                                 nullptr,
                                                 matmul_nn_pack_pairs_into_tiles_avx512bf16,
                                                 nullptr,
                                                 nullptr,
                                                 matmul_nn_pack_rows_as_b_panel_avx512bf16};

}  // namespace s3::cpu
