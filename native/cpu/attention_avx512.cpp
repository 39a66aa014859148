// AVX-512 attention chunk kernel (compiled with -mavx512f/bw/vl/dq; called only after run-time
// detection). A chunk's rows (the G heads of a decode step, or a prefill tile's rows) go through it
// in three phases: every row's scores, then every row's online-softmax update, then every row's
// weighted sum of value rows, so the rows' independent chains overlap instead of each row's
// softmax stalling the core. Scores and value sums take two rows at a time (the G = 2 heads of a
// decode step, or neighbouring rows of a prefill tile), so each key and value vector is loaded and
// widened once for both. Per row: 16 dot products accumulated along HD in 16 vectors, reduced
// together into one vector of 16 scores by a fixed transpose-add tree, then the online-softmax
// update with a vectorized exp and the weighted sum of value rows; a row's arithmetic is the same
// alone, paired or in any pass.
// Keys and values are f32, bf16 or fp8 e4m3 with row scales, widened 16 lanes at a time in
// registers (see load_kv); a chunk that many query rows read is widened once into stack buffers.
#include <immintrin.h>

#include <math.h>

#include "cpu/attention.h"
#include "cpu/online_softmax_avx512.h"
#include "cpu/sum_lanes_avx512.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
static_assert(kAttentionKeyChunk == kLanes, "one score per lane");

// Up to 16 key/value elements of one row as f32 (masked lanes zero). bf16: zero-extend to 32 bits,
// shift into the high half. fp8: each byte becomes f16 bits (sign-extend to 16 bits, shift left 7,
// clear bit 14: sign in bit 15, exponent and mantissa in bits 13..7), whose value is exactly the
// e4m3 value × 2^-8, subnormals included; F16C widens them and `factor` = 2^8 × the row's scale
// (exact) makes fp8e4m3_to_f32(byte) × scale, rounded once, as an f32 cache of it would hold.
inline __m512 load_kv(const float* src, __mmask16 mask, float) { return _mm512_maskz_loadu_ps(mask, src); }
inline __m512 load_kv(const uint16_t* src, __mmask16 mask, float) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, src));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
inline __m512 load_kv(const uint8_t* src, __mmask16 mask, float factor) {
  const __m256i shifted = _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_maskz_loadu_epi8(mask, src)), 7);
  const __m256i f16_bits = _mm256_and_si256(shifted, _mm256_set1_epi16(int16_t(0xBF80)));
  return _mm512_mul_ps(_mm512_cvtph_ps(f16_bits), _mm512_set1_ps(factor));
}

// load_kv's factors of the chunk's rows (rows past J repeat row J − 1): 2^8 × scale for fp8.
template <typename KV>
inline void row_factors(const float* scales, int64_t J, float (&factor)[kLanes]) {
  if constexpr (sizeof(KV) == 1) {
    for (int j = 0; j < kLanes; j++) factor[j] = 256.0f * scales[smaller(j, J - 1)];
  } else {
    for (int j = 0; j < kLanes; j++) factor[j] = 1.0f;  // unused
  }
}

// Query rows that share one pass over a chunk's keys and values: each key or value vector is loaded
// and widened once and used by every row of the group. Two rows (the G = 2 heads of a decode step)
// keep 16 score accumulators and their folded halves in registers.
constexpr int kMaxGroupRows = 2;

// The 16 scaled scores of kRows query rows against the chunk's keys (rows past J repeat row J − 1).
// Each row's arithmetic is the same whatever kRows: lane j of a per-key accumulator sums q·k along
// HD in order, folded by sum_lanes_16's fixed tree; keys are visited 8 at a time.
template <typename KV, int kRows>
inline void chunk_scores(const float* const (&q)[kRows], const KV* const (&key)[kLanes],
                         const float (&factor)[kLanes], int64_t HD, float scale, __m512 (&scores)[kRows]) {
  __m512 halves[kRows][8];
  for (int part = 0; part < 2; part++) {
    __m512 acc[kRows][8];
#pragma GCC unroll 16
    for (int i = 0; i < kRows * 8; i++) acc[i / 8][i % 8] = _mm512_setzero_ps();
    for (int64_t d = 0; d < HD; d += kLanes) {
      const __mmask16 mask = lane_mask(HD - d);
      __m512 qd[kRows];
#pragma GCC unroll 2
      for (int r = 0; r < kRows; r++) qd[r] = _mm512_maskz_loadu_ps(mask, q[r] + d);
#pragma GCC unroll 8
      for (int j = 0; j < 8; j++) {
        const __m512 k = load_kv(key[part * 8 + j] + d, mask, factor[part * 8 + j]);
#pragma GCC unroll 2
        for (int r = 0; r < kRows; r++) acc[r][j] = _mm512_fmadd_ps(qd[r], k, acc[r][j]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kRows * 4; i++) {
      halves[i / 4][part * 4 + i % 4] = add_halves(acc[i / 4][2 * (i % 4)], acc[i / 4][2 * (i % 4) + 1]);
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < kRows; r++) scores[r] = _mm512_mul_ps(sum_lanes_16(halves[r]), _mm512_set1_ps(scale));
}

// lane_mask for a count that may be zero or negative (a vector wholly past HD): no lanes.
inline __mmask16 lanes_left(int64_t count) { return count <= 0 ? __mmask16(0) : lane_mask(count); }

// out[row] = out[row] × correction + Σ_j p_j · v_j for kRows rows, j in order 0 .. seen − 1 for
// every element. Dimensions go kVectors × 16 at a time (lanes past HD masked off), so each row
// keeps kVectors independent accumulators and the FMA chains along j overlap (one chain per row
// stalls on FMA latency); each element's additions keep their order, so the bits are those of
// one vector at a time.
template <typename KV, int kRows, int kVectors>
inline void weigh_values(const int64_t (&rows)[kRows], const KV* v, const float (&value_factor)[kLanes], int64_t HD,
                         const int64_t (&seen)[kRows], int64_t seen_by_all, const float (*p)[kLanes],
                         const float* correction, float* out) {
  for (int64_t d = 0; d < HD; d += kVectors * kLanes) {
    __mmask16 mask[kVectors];
#pragma GCC unroll 8
    for (int e = 0; e < kVectors; e++) mask[e] = lanes_left(HD - d - e * kLanes);
    __m512 acc[kRows][kVectors];
#pragma GCC unroll 16
    for (int i = 0; i < kRows * kVectors; i++) {
      const int r = i / kVectors, e = i % kVectors;
      acc[r][e] = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask[e], out + rows[r] * HD + d + e * kLanes),
                                _mm512_set1_ps(correction[r]));
    }
    for (int64_t j = 0; j < seen_by_all; j++) {
#pragma GCC unroll 8
      for (int e = 0; e < kVectors; e++) {
        const __m512 value = load_kv(v + j * HD + d + e * kLanes, mask[e], value_factor[j]);
#pragma GCC unroll 2
        for (int r = 0; r < kRows; r++) acc[r][e] = _mm512_fmadd_ps(_mm512_set1_ps(p[r][j]), value, acc[r][e]);
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < kRows; r++) {
      for (int64_t j = seen_by_all; j < seen[r]; j++) {
#pragma GCC unroll 8
        for (int e = 0; e < kVectors; e++) {
          const __m512 value = load_kv(v + j * HD + d + e * kLanes, mask[e], value_factor[j]);
          acc[r][e] = _mm512_fmadd_ps(_mm512_set1_ps(p[r][j]), value, acc[r][e]);
        }
      }
#pragma GCC unroll 8
      for (int e = 0; e < kVectors; e++) _mm512_mask_storeu_ps(out + rows[r] * HD + d + e * kLanes, mask[e], acc[r][e]);
    }
  }
}

// weigh_values with as many vectors per row as HD needs (8, 4 or 2 at most).
template <typename KV, int kRows>
inline void weigh_all(const int64_t (&rows)[kRows], const KV* v, const float (&value_factor)[kLanes], int64_t HD,
                      const int64_t (&seen)[kRows], int64_t seen_by_all, const float (*p)[kLanes],
                      const float* correction, float* out) {
  if (HD > 4 * kLanes) {
    weigh_values<KV, kRows, 8>(rows, v, value_factor, HD, seen, seen_by_all, p, correction, out);
  } else if (HD > 2 * kLanes) {
    weigh_values<KV, kRows, 4>(rows, v, value_factor, HD, seen, seen_by_all, p, correction, out);
  } else {
    weigh_values<KV, kRows, 2>(rows, v, value_factor, HD, seen, seen_by_all, p, correction, out);
  }
}

// chunk_scores of kRows rows (indices rows[]) stored into p[0 .. kRows).
template <typename KV, int kRows>
inline void score_rows(const int64_t* rows, const float* q, const KV* const (&key)[kLanes],
                       const float (&key_factor)[kLanes], int64_t HD, float scale, float (*p)[kLanes]) {
  const float* q_rows[kRows];
  for (int r = 0; r < kRows; r++) q_rows[r] = q + rows[r] * HD;
  __m512 scores[kRows];
  chunk_scores<KV, kRows>(q_rows, key, key_factor, HD, scale, scores);
  for (int r = 0; r < kRows; r++) _mm512_store_ps(p[r], scores[r]);
}

// Rows of a chunk handled in one pass of the three phases below (a prefill tile's rows at most).
constexpr int64_t kPassRows = 32;

// The online-softmax step of n ≤ kPassRows query rows (indices rows[], each seeing ≥ 1 key) over
// one chunk, in three phases over all n rows: the scores, kMaxGroupRows rows at a time; each row's
// softmax update; then out[row] = out[row] × correction + Σ_j p_j · v_j, with j in order
// 0 .. seen − 1 for every row (the value rows both rows of a group see are widened once). A row's
// arithmetic is that of the row alone: the phases only let the rows' independent work overlap.
template <typename KV>
inline void attend_pass(const int64_t* rows, int64_t n, const float* q, const KV* const (&key)[kLanes], const KV* v,
                        const float (&key_factor)[kLanes], const float (&value_factor)[kLanes], int64_t HD,
                        const int32_t* visible, float scale, float* row_max, float* row_sum, float* out) {
  alignas(64) float p[kPassRows][kLanes];
  float correction[kPassRows];
  int64_t i = 0;
  for (; i + kMaxGroupRows <= n; i += kMaxGroupRows) {
    score_rows<KV, kMaxGroupRows>(rows + i, q, key, key_factor, HD, scale, p + i);
  }
  if (i < n) score_rows<KV, 1>(rows + i, q, key, key_factor, HD, scale, p + i);
  for (int64_t j = 0; j < n; j++) {
    const int64_t row = rows[j];
    correction[j] = softmax_step(_mm512_load_ps(p[j]), visible[row], row_max[row], row_sum[row], p[j]);
  }
  for (i = 0; i < n; i += kMaxGroupRows) {
    if (i + 1 < n) {
      const int64_t group[kMaxGroupRows] = {rows[i], rows[i + 1]};
      const int64_t seen[kMaxGroupRows] = {visible[rows[i]], visible[rows[i + 1]]};
      const int64_t seen_by_all = smaller(seen[0], seen[1]);
      weigh_all<KV, kMaxGroupRows>(group, v, value_factor, HD, seen, seen_by_all, p + i, correction + i, out);
    } else {
      const int64_t group[1] = {rows[i]};
      const int64_t seen[1] = {visible[rows[i]]};
      weigh_all<KV, 1>(group, v, value_factor, HD, seen, seen[0], p + i, correction + i, out);
    }
  }
}

// A bf16 or fp8 chunk that at least kWidenMinRows query rows read (prefill tiles), with head dims
// up to kWidenMaxHeadDim, is widened once into f32 stack buffers (2 × 16 KB); the few rows of a
// decode step (the G heads of one KV head) widen in registers, which measured faster than the
// round trip for bf16.
constexpr int64_t kWidenMinRows = 8;
constexpr int64_t kWidenMaxHeadDim = 256;

// J rows of HD elements to f32, as load_kv makes them.
template <typename KV>
inline void widen_rows(const KV* src, const float (&factor)[kLanes], int64_t J, int64_t HD, float* dst) {
  for (int64_t j = 0; j < J; j++) {
    for (int64_t d = 0; d < HD; d += kLanes) {
      const __mmask16 mask = lane_mask(HD - d);
      _mm512_mask_storeu_ps(dst + j * HD + d, mask, load_kv(src + j * HD + d, mask, factor[j]));
    }
  }
}

template <typename KV>
void attend_chunk_avx512(const float* q, int64_t R, const KV* k, const KV* v, const float* k_scale,
                         const float* v_scale, int64_t J, int64_t HD, const int32_t* visible, float scale,
                         float* row_max, float* row_sum, float* out) {
  float key_factor[kLanes], value_factor[kLanes];
  row_factors<KV>(k_scale, J, key_factor);
  row_factors<KV>(v_scale, J, value_factor);
  if constexpr (sizeof(KV) < sizeof(float)) {
    // Many rows read every key and value: widen the chunk once rather than once per row. The
    // f32 kernel then sees exactly the values the in-register path would, so results are equal.
    if (R >= kWidenMinRows && HD <= kWidenMaxHeadDim) {
      alignas(64) float keys[kLanes * kWidenMaxHeadDim];
      alignas(64) float values[kLanes * kWidenMaxHeadDim];
      widen_rows(k, key_factor, J, HD, keys);
      widen_rows(v, value_factor, J, HD, values);
      attend_chunk_avx512<float>(q, R, keys, values, nullptr, nullptr, J, HD, visible, scale, row_max, row_sum, out);
      return;
    }
  }
  const KV* key[kLanes];
  for (int j = 0; j < kLanes; j++) key[j] = k + smaller(j, J - 1) * HD;
  // Rows that see at least one key, kPassRows at a time; a row's result does not depend on the
  // rows it is grouped with.
  int64_t pass[kPassRows], n = 0;
  for (int64_t r = 0; r < R; r++) {
    if (visible[r] == 0) continue;
    pass[n++] = r;
    if (n == kPassRows) {
      attend_pass<KV>(pass, n, q, key, v, key_factor, value_factor, HD, visible, scale, row_max, row_sum, out);
      n = 0;
    }
  }
  if (n > 0) attend_pass<KV>(pass, n, q, key, v, key_factor, value_factor, HD, visible, scale, row_max, row_sum, out);
}

}  // namespace

const AttentionKernels kAttentionAvx512 = {"avx512", attend_chunk_avx512<float>, attend_chunk_avx512<uint16_t>,
                                           attend_chunk_avx512<uint8_t>};

}  // namespace s3::cpu
