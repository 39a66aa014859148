// AVX2 attention chunk kernel (compiled with -mavx2 -mfma -mf16c; called only after run-time
// detection): attention_avx512.cpp's algorithm with 8 lanes, the 16 keys of a chunk handled as
// two groups of 8, query rows two at a time sharing each loaded key and value vector. AVX2 has no
// masked loads for the HD tail, so it goes through zero-padded copies. Keys and values are f32,
// bf16 or fp8 e4m3 with row scales, 8 lanes widened in registers (load_kv).
#include <immintrin.h>

#include <math.h>
#include <cstring>

#include "cpu/attention.h"
#include "cpu/sum_lanes_avx2.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }
inline float larger(float a, float b) { return a > b ? a : b; }

constexpr int kLanes = 8;
constexpr int kGroups = int(kAttentionKeyChunk) / kLanes;

// Up to 8 floats from src, zero-padded.
inline __m256 load_partial(const float* src, int64_t count) {
  if (count >= kLanes) return _mm256_loadu_ps(src);
  alignas(32) float padded[kLanes] = {};
  std::memcpy(padded, src, size_t(count) * sizeof(float));
  return _mm256_load_ps(padded);
}

// Up to 8 key/value elements of one row as f32, zero-padded. bf16: zero-extend, shift to the high
// half. fp8: the f16-bits trick of attention_avx512.cpp's load_kv (the byte sign-extended, shifted
// left 7, bit 14 cleared is an f16 of value e4m3 × 2^-8), F16C, then × factor = 2^8 × the row's
// scale: fp8e4m3_to_f32(byte) × scale rounded once, as an f32 cache of it would hold.
inline __m256 load_kv(const float* src, int64_t count, float) { return load_partial(src, count); }

inline __m256 load_kv(const uint16_t* src, int64_t count, float) {
  __m128i raw;
  if (count >= kLanes) {
    raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  } else {
    alignas(16) uint16_t padded[kLanes] = {};
    std::memcpy(padded, src, size_t(count) * sizeof(uint16_t));
    raw = _mm_load_si128(reinterpret_cast<const __m128i*>(padded));
  }
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}

inline __m256 load_kv(const uint8_t* src, int64_t count, float factor) {
  __m128i raw;
  if (count >= kLanes) {
    raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
  } else {
    alignas(16) uint8_t padded[16] = {};
    std::memcpy(padded, src, size_t(count));
    raw = _mm_load_si128(reinterpret_cast<const __m128i*>(padded));
  }
  const __m128i f16_bits = _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(raw), 7), _mm_set1_epi16(int16_t(0xBF80)));
  return _mm256_mul_ps(_mm256_cvtph_ps(f16_bits), _mm256_set1_ps(factor));
}

// load_kv's factors of the chunk's rows (rows past J repeat row J − 1): 2^8 × scale for fp8.
template <typename KV>
inline void row_factors(const float* scales, int64_t J, float (&factor)[kAttentionKeyChunk]) {
  if constexpr (sizeof(KV) == 1) {
    for (int j = 0; j < int(kAttentionKeyChunk); j++) factor[j] = 256.0f * scales[smaller(j, J - 1)];
  } else {
    for (int j = 0; j < int(kAttentionKeyChunk); j++) factor[j] = 1.0f;  // unused
  }
}

inline void store_partial(float* dst, __m256 value, int64_t count) {
  if (count >= kLanes) return _mm256_storeu_ps(dst, value);
  alignas(32) float padded[kLanes];
  _mm256_store_ps(padded, value);
  std::memcpy(dst, padded, size_t(count) * sizeof(float));
}

// e^x for x ≤ 0 (Cephes expf, as in attention_avx512.cpp); 2^n is built in the exponent bits.
inline __m256 exp_nonpositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.33654f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(exponent));
}

inline float max_lanes(__m256 v) {
  const __m128 quarter = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_max_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_max_ss(pair, _mm_movehdup_ps(pair)));
}

// Query rows that share one pass over a chunk's keys and values (as in attention_avx512.cpp): each
// key or value vector is loaded and widened once for every row of the group.
constexpr int kMaxGroupRows = 2;

// The 8 scaled scores of kRows query rows against 8 keys. Each row's arithmetic is the same
// whatever kRows: a per-key accumulator sums q·k along HD in order, folded by sum_lanes_8's fixed
// tree; keys are visited 4 at a time (16 registers).
template <typename KV, int kRows>
inline void group_scores(const float* const (&q)[kRows], const KV* const* key, const float* factor, int64_t HD,
                         float scale, __m256 (&scores)[kRows]) {
  __m256 halves[kRows][4];
  for (int part = 0; part < 2; part++) {
    __m256 acc[kRows][4];
#pragma GCC unroll 8
    for (int i = 0; i < kRows * 4; i++) acc[i / 4][i % 4] = _mm256_setzero_ps();
    for (int64_t d = 0; d < HD; d += kLanes) {
      __m256 qd[kRows];
#pragma GCC unroll 2
      for (int r = 0; r < kRows; r++) qd[r] = load_partial(q[r] + d, HD - d);
#pragma GCC unroll 4
      for (int j = 0; j < 4; j++) {
        const __m256 k = load_kv(key[part * 4 + j] + d, HD - d, factor[part * 4 + j]);
#pragma GCC unroll 2
        for (int r = 0; r < kRows; r++) acc[r][j] = _mm256_fmadd_ps(qd[r], k, acc[r][j]);
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < kRows * 2; i++) {
      halves[i / 2][part * 2 + i % 2] = add_halves(acc[i / 2][2 * (i % 2)], acc[i / 2][2 * (i % 2) + 1]);
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < kRows; r++) scores[r] = _mm256_mul_ps(sum_lanes_8(halves[r]), _mm256_set1_ps(scale));
}

// Value vectors per block of weigh_values: 2 rows × 4 accumulators leave 8 of the 16 registers.
constexpr int kValueVectors = 4;

// out[row] = out[row] × correction + Σ_j p_j · v_j for kRows rows, j in order 0 .. seen − 1 for
// every element, kValueVectors × 8 dimensions at a time: independent accumulators let the FMA
// chains along j overlap, and each element's additions keep their order (attention_avx512.cpp).
template <typename KV, int kRows>
inline void weigh_values(const int64_t (&rows)[kRows], const KV* v, const float (&value_factor)[kAttentionKeyChunk],
                         int64_t HD, const int64_t (&seen)[kRows], int64_t seen_by_all,
                         const float (&p)[kRows][kAttentionKeyChunk], const float (&correction)[kRows], float* out) {
  for (int64_t d = 0; d < HD; d += kValueVectors * kLanes) {
    // Vectors past HD (count ≤ 0) compute zeros that are never stored.
    int64_t count[kValueVectors];
    for (int e = 0; e < kValueVectors; e++) count[e] = HD - d - e * kLanes;
    auto value = [&](int64_t j, int e) {
      return count[e] > 0 ? load_kv(v + j * HD + d + e * kLanes, count[e], value_factor[j]) : _mm256_setzero_ps();
    };
    __m256 acc[kRows][kValueVectors];
#pragma GCC unroll 8
    for (int i = 0; i < kRows * kValueVectors; i++) {
      const int r = i / kValueVectors, e = i % kValueVectors;
      acc[r][e] = count[e] > 0 ? _mm256_mul_ps(load_partial(out + rows[r] * HD + d + e * kLanes, count[e]),
                                               _mm256_set1_ps(correction[r]))
                               : _mm256_setzero_ps();
    }
    for (int64_t j = 0; j < seen_by_all; j++) {
#pragma GCC unroll 4
      for (int e = 0; e < kValueVectors; e++) {
        const __m256 x = value(j, e);
#pragma GCC unroll 2
        for (int r = 0; r < kRows; r++) acc[r][e] = _mm256_fmadd_ps(_mm256_set1_ps(p[r][j]), x, acc[r][e]);
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < kRows; r++) {
      for (int64_t j = seen_by_all; j < seen[r]; j++) {
#pragma GCC unroll 4
        for (int e = 0; e < kValueVectors; e++) acc[r][e] = _mm256_fmadd_ps(_mm256_set1_ps(p[r][j]), value(j, e), acc[r][e]);
      }
#pragma GCC unroll 4
      for (int e = 0; e < kValueVectors; e++) {
        if (count[e] > 0) store_partial(out + rows[r] * HD + d + e * kLanes, acc[r][e], count[e]);
      }
    }
  }
}

// The online-softmax step of kRows query rows (indices rows[], each seeing ≥ 1 key) over one chunk;
// every row adds its value rows in order j = 0 .. seen − 1 (as attention_avx512.cpp's attend_pass).
template <typename KV, int kRows>
inline void attend_rows(const int64_t (&rows)[kRows], const float* q, const KV* const (&key)[kAttentionKeyChunk],
                        const KV* v, const float (&key_factor)[kAttentionKeyChunk],
                        const float (&value_factor)[kAttentionKeyChunk], int64_t HD, const int32_t* visible,
                        float scale, float* row_max, float* row_sum, float* out) {
  const __m256i lane_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const float* q_rows[kRows];
  int64_t seen[kRows], seen_by_any = 0, seen_by_all = kAttentionKeyChunk;
  for (int r = 0; r < kRows; r++) {
    q_rows[r] = q + rows[r] * HD;
    seen[r] = visible[rows[r]];
    seen_by_any = seen[r] > seen_by_any ? seen[r] : seen_by_any;
    seen_by_all = smaller(seen_by_all, seen[r]);
  }
  __m256 scores[kRows][kGroups], seen_mask[kRows][kGroups];
  float chunk_max[kRows];
  for (int r = 0; r < kRows; r++) chunk_max[r] = -INFINITY;
  for (int group = 0; group < kGroups; group++) {
    if (seen_by_any <= group * kLanes) {  // no row sees a key in this group
      for (int r = 0; r < kRows; r++) {
        seen_mask[r][group] = _mm256_setzero_ps();
        scores[r][group] = _mm256_set1_ps(-INFINITY);
      }
      continue;
    }
    __m256 group_score[kRows];
    group_scores<KV, kRows>(q_rows, key + group * kLanes, key_factor + group * kLanes, HD, scale, group_score);
    for (int r = 0; r < kRows; r++) {
      const __m256i seen_in_group = _mm256_set1_epi32(int32_t(seen[r] - group * kLanes));
      seen_mask[r][group] = _mm256_castsi256_ps(_mm256_cmpgt_epi32(seen_in_group, lane_index));
      scores[r][group] = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), group_score[r], seen_mask[r][group]);
      chunk_max[r] = larger(chunk_max[r], max_lanes(scores[r][group]));
    }
  }
  alignas(32) float p[kRows][kAttentionKeyChunk];
  float correction[kRows];
  for (int r = 0; r < kRows; r++) {
    const int64_t row = rows[r];
    const float new_max = larger(row_max[row], chunk_max[r]);
    // e^0 is exactly 1: skip the call when the running max holds (most chunks).
    correction[r] = new_max == row_max[row] ? 1.0f : expf(row_max[row] - new_max);
    __m256 total = _mm256_setzero_ps();
    for (int group = 0; group < kGroups; group++) {
      const __m256 shifted = _mm256_sub_ps(scores[r][group], _mm256_set1_ps(new_max));
      const __m256 weights = _mm256_and_ps(seen_mask[r][group], exp_nonpositive(shifted));
      _mm256_store_ps(p[r] + group * kLanes, weights);
      total = _mm256_add_ps(total, weights);
    }
    row_sum[row] = row_sum[row] * correction[r] + sum_lanes(total);
    row_max[row] = new_max;
  }
  weigh_values<KV, kRows>(rows, v, value_factor, HD, seen, seen_by_all, p, correction, out);
}

template <typename KV>
void attend_chunk_avx2(const float* q, int64_t R, const KV* k, const KV* v, const float* k_scale, const float* v_scale,
                       int64_t J, int64_t HD, const int32_t* visible, float scale, float* row_max, float* row_sum,
                       float* out) {
  float key_factor[kAttentionKeyChunk], value_factor[kAttentionKeyChunk];
  row_factors<KV>(k_scale, J, key_factor);
  row_factors<KV>(v_scale, J, value_factor);
  const KV* key[kAttentionKeyChunk];
  for (int j = 0; j < int(kAttentionKeyChunk); j++) key[j] = k + smaller(j, J - 1) * HD;
  // Rows that see at least one key, kMaxGroupRows at a time; a row's result does not depend on
  // the row it is grouped with.
  int64_t group[kMaxGroupRows], grouped = 0;
  for (int64_t r = 0; r < R; r++) {
    if (visible[r] == 0) continue;
    group[grouped++] = r;
    if (grouped == kMaxGroupRows) {
      attend_rows<KV, kMaxGroupRows>(group, q, key, v, key_factor, value_factor, HD, visible, scale, row_max, row_sum,
                                     out);
      grouped = 0;
    }
  }
  if (grouped == 1) {
    const int64_t last[1] = {group[0]};
    attend_rows<KV, 1>(last, q, key, v, key_factor, value_factor, HD, visible, scale, row_max, row_sum, out);
  }
}

}  // namespace

const AttentionKernels kAttentionAvx2 = {"avx2", attend_chunk_avx2<float>, attend_chunk_avx2<uint16_t>,
                                         attend_chunk_avx2<uint8_t>};

}  // namespace s3::cpu
