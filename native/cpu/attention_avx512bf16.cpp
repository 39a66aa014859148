// AVX-512 BF16 attention over a bf16 KV cache (the avx512bf16 level's BF16-product entries of
// AttentionKernels; compiled with the AVX-512 flags plus -mavx512bf16, called only after run-time
// detection). Products are BF16 with f32 accumulation (VDPBF16PS), as in the level's matmuls: the
// query rows are rounded to bf16 once per tile (prepare_queries), keys and values are the cache's
// bits as stored, and a row's weights exp(score − max) are rounded to bf16 before they multiply
// values and before they are summed, so a row's output mixes its values by exactly the weights its
// denominator sums.
//
// Rows go 16 at a time, one per f32 lane, so the online softmax runs on whole vectors with no
// reduction across lanes: the chunk's 16 keys give 16 score vectors (lane r: row r), the running
// max, the rescale factor and the sum are elementwise, and the keys are folded in order 0 .. 15.
// The score of (row, key) is four VDPBF16PS chains over the head's dim pairs (add_chains),
// computed either with rows in lanes (broadcast key pairs against a vector of 16 rows' query pairs)
// or, for groups of few rows (decode steps), with keys in lanes (broadcast query pairs against the
// keys transposed into dim pairs): the same products added in the same order, so the same bits.
// Values: the chunk's value rows are interleaved once into key pairs (keys 2i and 2i + 1 of each dim
// side by side, as VDPBF16PS pairs its operands); output element d adds pair 0, 1, ... in order up
// to the row's last visible key, whose partner past it is masked to zero. A row's arithmetic depends
// only on its own query, keys, values and visible count: the same bits in a prefill tile, a decode
// step or any batch.
#include <immintrin.h>

#include "cpu/attention.h"
#include "cpu/f32_to_bf16_avx512.h"
#include "cpu/online_softmax_avx512.h"
#include "cpu/sum_lanes_avx512.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;  // keys per chunk; rows per group; f32 lanes per vector
constexpr int kStep = 32;   // bf16 values per vector
constexpr int kPairs = kLanes / 2;
constexpr int64_t kMaxPairs = kBf16ProductsMaxHeadDim / 2;
constexpr int64_t kFewRows = 4;  // groups of at most this many rows score with keys in lanes
static_assert(kAttentionKeyChunk == kLanes, "one key per score vector");
static_assert(kBf16ProductsGroupRows == kLanes, "one row per lane");

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh>(v); }

// The first `count` of 32 bf16 lanes (all from 32 on; none at 0 or below).
inline __mmask32 bf16_lanes(int64_t count) {
  if (count <= 0) return 0;
  return count >= kStep ? ~__mmask32(0) : __mmask32((1u << count) - 1u);
}

inline __m512i broadcast_pair(const void* pair) { return _mm512_set1_epi32(_mm_cvtsi128_si32(_mm_loadu_si32(pair))); }

// A score's dim pairs p go to chain p mod kChains, each in increasing p from zero; the chains are
// added as (0 + 1) + (2 + 3). Four chains keep a decode step's few rows from waiting on one
// chain's latency.
constexpr int kChains = 4;
inline __m512 add_chains(const __m512 (&chain)[kChains]) {
  return _mm512_add_ps(_mm512_add_ps(chain[0], chain[1]), _mm512_add_ps(chain[2], chain[3]));
}

// ---- scores ---------------------------------------------------------------------------------------

// Rows in lanes: scores[j] lane r = the dot product of row r's query with key j (unscaled) for the
// group's rows, from its query pairs qp (layout of kBf16ProductsGroupRows in attention.h), four
// keys at a time, for the keys before `seen` (the most any row sees; the causal diagonal's first
// rows see half the chunk). Keys past J repeat key J − 1, and keys from `seen` rounded up to four
// score zero; the softmax masks them all.
inline void scores_rows_in_lanes(const uint32_t* qp, const uint16_t* k, int64_t J, int64_t seen, int64_t HD,
                                 __m512 (&scores)[kLanes]) {
  const int64_t P = HD / 2;
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; j++) scores[j] = _mm512_setzero_ps();
  for (int first = 0; first < seen; first += kChains) {
    const uint16_t* key[kChains];
    for (int j = 0; j < kChains; j++) key[j] = k + smaller(first + j, J - 1) * HD;
    __m512 acc[kChains][kChains];  // [key][chain]
#pragma GCC unroll 16
    for (int i = 0; i < kChains * kChains; i++) acc[i / kChains][i % kChains] = _mm512_setzero_ps();
    for (int64_t p = 0; p < P; p += kChains) {
#pragma GCC unroll 4
      for (int c = 0; c < kChains; c++) {
        if (p + c >= P) break;
        const __m512i queries = _mm512_loadu_si512(qp + (p + c) * kLanes);
#pragma GCC unroll 4
        for (int j = 0; j < kChains; j++) {
          acc[j][c] = _mm512_dpbf16_ps(acc[j][c], as_bf16(queries), as_bf16(broadcast_pair(key[j] + 2 * (p + c))));
        }
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kChains; j++) scores[first + j] = add_chains(acc[j]);
  }
}

// A 16 × 16 transpose of 32-bit elements: dst[c × 16 + j] = element c of r[j] (32-bit, then 64-bit
// interleaves within 128-bit blocks, then two rounds of 128-bit block shuffles).
inline void transpose_16x16(const __m512i (&r)[kLanes], uint32_t* dst) {
  __m512i t[kLanes], u[kLanes];
#pragma GCC unroll 8
  for (int j = 0; j < kLanes; j += 2) {
    t[j] = _mm512_unpacklo_epi32(r[j], r[j + 1]);
    t[j + 1] = _mm512_unpackhi_epi32(r[j], r[j + 1]);
  }
  // u[4g + c] holds column c + 4b of rows 4g .. 4g + 3 in 128-bit block b.
#pragma GCC unroll 4
  for (int g = 0; g < 4; g++) {
    u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    const __m512i low_even = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);       // columns c, c + 8; rows 0-7
    const __m512i low_odd = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xDD);        // columns c + 4, c + 12
    const __m512i high_even = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);  // rows 8-15
    const __m512i high_odd = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xDD);
    _mm512_storeu_si512(dst + c * kLanes, _mm512_shuffle_i32x4(low_even, high_even, 0x88));
    _mm512_storeu_si512(dst + (c + 8) * kLanes, _mm512_shuffle_i32x4(low_even, high_even, 0xDD));
    _mm512_storeu_si512(dst + (c + 4) * kLanes, _mm512_shuffle_i32x4(low_odd, high_odd, 0x88));
    _mm512_storeu_si512(dst + (c + 12) * kLanes, _mm512_shuffle_i32x4(low_odd, high_odd, 0xDD));
  }
}

// The chunk's keys transposed into dim pairs: kt[p × 16 + j] = the bf16 pair (k_j[2p], k_j[2p + 1])
// (keys at or past J zero), 16 dim pairs at a time.
inline void transpose_keys(const uint16_t* k, int64_t J, int64_t HD, uint32_t* kt) {
  for (int64_t d = 0; d < HD; d += kStep) {
    const __mmask32 mask = bf16_lanes(HD - d);
    __m512i r[kLanes];
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; j++) r[j] = j < J ? _mm512_maskz_loadu_epi16(mask, k + j * HD + d) : _mm512_setzero_si512();
    transpose_16x16(r, kt + (d / 2) * kLanes);
  }
}

// Keys in lanes, for a group of n ≤ kFewRows rows: rows[r] lane j = the dot product of row r's query
// with key j (unscaled), from the keys transposed into dim pairs; the same chains as
// scores_rows_in_lanes.
inline void scores_keys_in_lanes(const uint32_t* qp, int64_t n, const uint16_t* k, int64_t J, int64_t HD,
                                 __m512 (&rows)[kFewRows]) {
  alignas(64) uint32_t kt[kMaxPairs * kLanes];
  transpose_keys(k, J, HD, kt);
  const int64_t P = HD / 2;
  __m512 acc[kFewRows][kChains];  // [row][chain]
#pragma GCC unroll 16
  for (int i = 0; i < kFewRows * kChains; i++) acc[i / kChains][i % kChains] = _mm512_setzero_ps();
  for (int64_t p = 0; p < P; p += kChains) {
#pragma GCC unroll 4
    for (int c = 0; c < kChains; c++) {
      if (p + c >= P) break;
      const __m512i keys = _mm512_load_si512(kt + (p + c) * kLanes);
#pragma GCC unroll 4
      for (int r = 0; r < kFewRows; r++) {
        if (r < n) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], as_bf16(broadcast_pair(qp + (p + c) * kLanes + r)), as_bf16(keys));
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kFewRows; r++) rows[r] = add_chains(acc[r]);
}

// ---- values ---------------------------------------------------------------------------------------

// The chunk's value rows as key pairs: pairs[i × 2·W + 2d + e] = v[2i + e][d] for d < HD (W: HD
// rounded up to 16; rows at or past J read as zero), so 32 bf16 values at pairs + i × 2·W + 2d are
// the pair's dims d .. d + 15.
inline void interleave_values(const uint16_t* v, int64_t J, int64_t HD, int64_t W, uint16_t* pairs) {
  const __m512i low_dims = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38,
                                            6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i high_dims = _mm512_add_epi16(low_dims, _mm512_set1_epi16(16));
  for (int i = 0; i < kPairs; i++) {
    const int64_t even = 2 * i, odd = 2 * i + 1;
    for (int64_t d = 0; d < HD; d += kStep) {
      const __mmask32 mask = bf16_lanes(HD - d);
      const __m512i a = even < J ? _mm512_maskz_loadu_epi16(mask, v + even * HD + d) : _mm512_setzero_si512();
      const __m512i b = odd < J ? _mm512_maskz_loadu_epi16(mask, v + odd * HD + d) : _mm512_setzero_si512();
      uint16_t* dst = pairs + i * 2 * W + 2 * d;
      _mm512_storeu_si512(dst, _mm512_permutex2var_epi16(a, low_dims, b));
      if (d + kLanes < W) _mm512_storeu_si512(dst + kStep, _mm512_permutex2var_epi16(a, high_dims, b));
    }
  }
}

// out[row] = out[row] × correction + Σ_i w_i · v_i over key pairs i in order, for kRows rows:
// whole[r] pairs each row sees fully, then (odd[r]) one pair whose second key it does not see.
// weights[r] points at the row's pair i at weights[r][i × 16]. Dimensions go kVectors × 16 at a
// time, each row keeping kVectors accumulators. kFull: HD is a multiple of kVectors × 16, so the
// rows' output moves with plain loads and stores (masked ones cost Zen 4 about a tenth of the
// kernel's time).
template <int kRows, int kVectors, bool kFull>
inline void weigh_values(const int64_t (&rows)[kRows], const uint16_t* pairs, int64_t W, int64_t HD,
                         const int64_t (&whole)[kRows], const bool (&odd)[kRows], const uint32_t* const (&weights)[kRows],
                         const float (&correction)[kRows], float* out) {
  const int64_t whole_by_all = kRows == 1 ? whole[0] : smaller(whole[0], whole[kRows - 1]);
  for (int64_t d = 0; d < HD; d += kVectors * kLanes) {
    __mmask16 mask[kVectors];
    __mmask32 pair_mask[kVectors];
#pragma GCC unroll 8
    for (int e = 0; e < kVectors; e++) {
      const int64_t dims = HD - d - e * kLanes;
      mask[e] = dims <= 0 ? __mmask16(0) : lane_mask(dims);
      pair_mask[e] = bf16_lanes(2 * dims);
    }
    __m512 acc[kRows][kVectors];
#pragma GCC unroll 16
    for (int i = 0; i < kRows * kVectors; i++) {
      const int r = i / kVectors, e = i % kVectors;
      const float* from = out + rows[r] * HD + d + e * kLanes;
      const __m512 earlier = kFull ? _mm512_loadu_ps(from) : _mm512_maskz_loadu_ps(mask[e], from);
      acc[r][e] = _mm512_mul_ps(earlier, _mm512_set1_ps(correction[r]));
    }
    for (int64_t i = 0; i < whole_by_all; i++) {
#pragma GCC unroll 8
      for (int e = 0; e < kVectors; e++) {
        const __m512i value = _mm512_maskz_loadu_epi16(pair_mask[e], pairs + i * 2 * W + 2 * (d + e * kLanes));
#pragma GCC unroll 2
        for (int r = 0; r < kRows; r++) {
          acc[r][e] = _mm512_dpbf16_ps(acc[r][e], as_bf16(broadcast_pair(weights[r] + i * kLanes)), as_bf16(value));
        }
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < kRows; r++) {
      const int64_t end = whole[r] + (odd[r] ? 1 : 0);
      for (int64_t i = whole_by_all; i < end; i++) {
        // The last pair of an odd count: its second key (not visible to the row) masked to zero,
        // so a non-finite value there cannot reach the row through a zero weight.
        const __mmask32 keys = i < whole[r] ? ~__mmask32(0) : __mmask32(0x55555555u);
#pragma GCC unroll 8
        for (int e = 0; e < kVectors; e++) {
          const __m512i value =
              _mm512_maskz_loadu_epi16(pair_mask[e] & keys, pairs + i * 2 * W + 2 * (d + e * kLanes));
          acc[r][e] = _mm512_dpbf16_ps(acc[r][e], as_bf16(broadcast_pair(weights[r] + i * kLanes)), as_bf16(value));
        }
      }
#pragma GCC unroll 8
      for (int e = 0; e < kVectors; e++) {
        float* to = out + rows[r] * HD + d + e * kLanes;
        if (kFull) {
          _mm512_storeu_ps(to, acc[r][e]);
        } else {
          _mm512_mask_storeu_ps(to, mask[e], acc[r][e]);
        }
      }
    }
  }
}

// weigh_values with kVectors vectors per row, on plain loads and stores where HD allows.
template <int kRows, int kVectors>
inline void weigh_blocks(const int64_t (&rows)[kRows], const uint16_t* pairs, int64_t W, int64_t HD,
                         const int64_t (&whole)[kRows], const bool (&odd)[kRows],
                         const uint32_t* const (&weights)[kRows], const float (&correction)[kRows], float* out) {
  if (HD % (kVectors * kLanes) == 0) {
    weigh_values<kRows, kVectors, true>(rows, pairs, W, HD, whole, odd, weights, correction, out);
  } else {
    weigh_values<kRows, kVectors, false>(rows, pairs, W, HD, whole, odd, weights, correction, out);
  }
}

// weigh_values with as many vectors per row as HD needs (8, 4 or 2 at most).
template <int kRows>
inline void weigh_all(const int64_t (&rows)[kRows], const uint16_t* pairs, int64_t W, int64_t HD,
                      const int64_t (&whole)[kRows], const bool (&odd)[kRows], const uint32_t* const (&weights)[kRows],
                      const float (&correction)[kRows], float* out) {
  if (HD > 4 * kLanes) {
    weigh_blocks<kRows, 8>(rows, pairs, W, HD, whole, odd, weights, correction, out);
  } else if (HD > 2 * kLanes) {
    weigh_blocks<kRows, 4>(rows, pairs, W, HD, whole, odd, weights, correction, out);
  } else {
    weigh_blocks<kRows, 2>(rows, pairs, W, HD, whole, odd, weights, correction, out);
  }
}

// ---- the online softmax ----------------------------------------------------------------------------
// Both forms below give a row the same bits: scaled scores, the running max (exact whatever the
// order), factor = 1 where the max holds, 0 on a row's first keys (old max −inf), else
// exp(old − new); weights exp(score − max) of visible keys rounded to bf16; their sum by
// sum_lanes' tree (keys i + i + 8, then + 4, + 2, + 1); row_sum = row_sum × factor + sum, fused.
// Each writes the row's weights as pairs (weights[i × 16 + r]: keys 2i, 2i + 1 of row r) and its
// factor (factors[r]).

// A weight vector rounded to bf16, held as f32 (low 16 bits zero).
inline __m512 round_to_bf16(__m512 w) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(f32_to_bf16_lanes(_mm512_castps_si512(w)), 16));
}

// Rows in lanes: scores[j] lane r is (row r, key j); rows with seen[r] = 0 (not in `active`) are
// left alone.
inline void softmax_rows_in_lanes(__m512 (&scores)[kLanes], __m512i seen, __mmask16 active, float scale, float* row_max,
                                  float* row_sum, uint32_t* weights, float* factors) {
  const __m512 old_max = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), active, row_max);
  __m512 chunk_max = _mm512_set1_ps(-INFINITY);
  __mmask16 sees[kLanes];
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; j++) {
    sees[j] = _mm512_mask_cmpgt_epi32_mask(active, seen, _mm512_set1_epi32(j));
    scores[j] = _mm512_mul_ps(scores[j], _mm512_set1_ps(scale));
    chunk_max = _mm512_mask_max_ps(chunk_max, sees[j], chunk_max, scores[j]);
  }
  const __m512 new_max = _mm512_max_ps(old_max, chunk_max);
  const __mmask16 moved = _mm512_mask_cmp_ps_mask(active, new_max, old_max, _CMP_NEQ_UQ);
  const __mmask16 started = _mm512_mask_cmp_ps_mask(active, old_max, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
  __m512 factor = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), moved, exp_nonpositive(_mm512_sub_ps(old_max, new_max)));
  factor = _mm512_mask_mov_ps(factor, started, _mm512_setzero_ps());
  __m512 w[kLanes];
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; j++) {
    w[j] = round_to_bf16(_mm512_maskz_mov_ps(sees[j], exp_nonpositive(_mm512_sub_ps(scores[j], new_max))));
  }
  __m512 t[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) t[i] = _mm512_add_ps(w[i], w[i + 8]);
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) t[i] = _mm512_add_ps(t[i], t[i + 4]);
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(t[0], t[2]), _mm512_add_ps(t[1], t[3]));
  const __m512 old_sum = _mm512_maskz_loadu_ps(active, row_sum);
  _mm512_mask_storeu_ps(row_sum, active, _mm512_fmadd_ps(old_sum, factor, sum));
  _mm512_mask_storeu_ps(row_max, active, new_max);
  _mm512_store_ps(factors, factor);
  // Lane r of pair i: the high words of row r's rounded weights of keys 2i and 2i + 1.
  const __m512i high_words = _mm512_set_epi16(63, 31, 61, 29, 59, 27, 57, 25, 55, 23, 53, 21, 51, 19, 49, 17, 47, 15,
                                              45, 13, 43, 11, 41, 9, 39, 7, 37, 5, 35, 3, 33, 1);
#pragma GCC unroll 8
  for (int i = 0; i < kPairs; i++) {
    _mm512_store_si512(weights + i * kLanes, _mm512_permutex2var_epi16(_mm512_castps_si512(w[2 * i]), high_words,
                                                                       _mm512_castps_si512(w[2 * i + 1])));
  }
}

// One row, keys in lanes (scores lane j: key j), seeing `seen` ≥ 1 of them; row r of its group.
inline void softmax_keys_in_lanes(__m512 scores, int64_t seen, int64_t r, float scale, float& row_max, float& row_sum,
                                  uint32_t* weights, float* factors) {
  const __mmask16 sees = lane_mask(seen);
  scores = _mm512_mul_ps(scores, _mm512_set1_ps(scale));
  const float old_max = row_max;
  const float new_max = larger_of(old_max, _mm512_mask_reduce_max_ps(sees, scores));
  float factor = 1.0f;
  if (old_max == -INFINITY) {
    factor = 0.0f;
  } else if (new_max != old_max) {
    factor = _mm512_cvtss_f32(exp_nonpositive(_mm512_set1_ps(old_max - new_max)));
  }
  const __m512 w = round_to_bf16(_mm512_maskz_mov_ps(sees, exp_nonpositive(_mm512_sub_ps(scores, _mm512_set1_ps(new_max)))));
  const __m128 sum = _mm_set_ss(sum_lanes(w));
  row_sum = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(row_sum), _mm_set_ss(factor), sum));
  row_max = new_max;
  factors[r] = factor;
  alignas(32) uint32_t packed[kPairs];
  _mm256_store_si256(reinterpret_cast<__m256i*>(packed), _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(w), 16)));
  for (int i = 0; i < kPairs; i++) weights[i * kLanes + r] = packed[i];
}

// ---- one group of rows ----------------------------------------------------------------------------

// Rows first .. first + n − 1 (n ≤ 16) over the chunk: scores, the online-softmax step, then the
// weighted values two rows at a time.
inline void attend_group(const uint32_t* qp, int64_t first, int64_t n, const uint16_t* k, const uint16_t* pairs,
                         int64_t W, int64_t J, int64_t HD, const int32_t* visible, float scale, float* row_max,
                         float* row_sum, float* out) {
  const __mmask16 rows_mask = lane_mask(n);
  const __m512i seen = _mm512_maskz_loadu_epi32(rows_mask, visible + first);
  const __mmask16 active = _mm512_mask_cmpgt_epi32_mask(rows_mask, seen, _mm512_setzero_si512());
  if (active == 0) return;
  alignas(64) uint32_t weights[kPairs * kLanes];  // pair i of row r at [i × 16 + r]
  alignas(64) float factors[kLanes];
  if (n <= kFewRows) {
    __m512 rows[kFewRows];
    scores_keys_in_lanes(qp, n, k, J, HD, rows);
    for (int r = 0; r < n; r++) {
      if (((active >> r) & 1) == 0) continue;
      softmax_keys_in_lanes(rows[r], visible[first + r], r, scale, row_max[first + r], row_sum[first + r], weights,
                            factors);
    }
  } else {
    __m512 scores[kLanes];
    scores_rows_in_lanes(qp, k, J, _mm512_mask_reduce_max_epi32(active, seen), HD, scores);
    softmax_rows_in_lanes(scores, seen, active, scale, row_max + first, row_sum + first, weights, factors);
  }

  // Weighted values, two active rows at a time.
  int64_t pending = -1;
  for (int64_t r = 0; r < n; r++) {
    if (((active >> r) & 1) == 0) continue;
    if (pending < 0) {
      pending = r;
      continue;
    }
    const int64_t rows[2] = {first + pending, first + r};
    const int64_t whole[2] = {visible[first + pending] / 2, visible[first + r] / 2};
    const bool odd[2] = {visible[first + pending] % 2 == 1, visible[first + r] % 2 == 1};
    const uint32_t* const row_weights[2] = {weights + pending, weights + r};
    const float corrections[2] = {factors[pending], factors[r]};
    weigh_all<2>(rows, pairs, W, HD, whole, odd, row_weights, corrections, out);
    pending = -1;
  }
  if (pending >= 0) {
    const int64_t rows[1] = {first + pending};
    const int64_t whole[1] = {visible[first + pending] / 2};
    const bool odd[1] = {visible[first + pending] % 2 == 1};
    const uint32_t* const row_weights[1] = {weights + pending};
    const float corrections[1] = {factors[pending]};
    weigh_all<1>(rows, pairs, W, HD, whole, odd, row_weights, corrections, out);
  }
}

}  // namespace

void prepare_bf16_product_queries_avx512bf16(const float* q, int64_t R, int64_t G, int64_t token_stride, int64_t HD,
                                             uint32_t* pairs) {
  const int64_t P = HD / 2;
  // The low words of two vectors of bf16 lanes, a's 16 then b's: 16 bf16 pairs.
  const __m512i low_words = _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28,
                                             26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t first = 0; first < R; first += kLanes) {
    uint32_t* group = pairs + (first / kLanes) * P * kLanes;
    for (int64_t d = 0; d < HD; d += kStep) {
      const __mmask16 low = lane_mask(HD - d), high = HD - d > kLanes ? lane_mask(HD - d - kLanes) : __mmask16(0);
      __m512i rows[kLanes];  // dim pairs d / 2 .. d / 2 + 15 of each row
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; j++) {
        const int64_t r = first + j;
        if (r >= R) {
          rows[j] = _mm512_setzero_si512();
          continue;
        }
        const float* row = q + (r / G) * token_stride + (r % G) * HD + d;
        const __m512i a = f32_to_bf16_lanes(_mm512_maskz_loadu_epi32(low, row));
        const __m512i b = f32_to_bf16_lanes(_mm512_maskz_loadu_epi32(high, row + kLanes));
        rows[j] = _mm512_permutex2var_epi16(a, low_words, b);
      }
      const int64_t count = smaller(kLanes, P - d / 2);
      if (count == kLanes) {
        transpose_16x16(rows, group + (d / 2) * kLanes);
      } else {
        alignas(64) uint32_t columns[kLanes * kLanes];
        transpose_16x16(rows, columns);
        for (int64_t p = 0; p < count; p++) {
          _mm512_storeu_si512(group + (d / 2 + p) * kLanes, _mm512_load_si512(columns + p * kLanes));
        }
      }
    }
  }
}

void attend_chunk_bf16_products_avx512bf16(const uint32_t* q, int64_t R, const uint16_t* k, const uint16_t* v, int64_t J,
                                           int64_t HD, const int32_t* visible, float scale, float* row_max,
                                           float* row_sum, float* out) {
  const int64_t W = (HD + kLanes - 1) / kLanes * kLanes;
  alignas(64) uint16_t pairs[kPairs * 2 * kBf16ProductsMaxHeadDim];
  interleave_values(v, J, HD, W, pairs);
  for (int64_t first = 0; first < R; first += kLanes) {
    attend_group(q + (first / kLanes) * (HD / 2) * kLanes, first, smaller(kLanes, R - first), k, pairs, W, J, HD,
                 visible, scale, row_max, row_sum, out);
  }
}

}  // namespace s3::cpu
