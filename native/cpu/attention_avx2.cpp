// AVX2 attention chunk kernel (compiled with -mavx2 -mfma -mf16c; called only after run-time
// detection): attention_avx512.cpp's algorithm with 8 lanes, the 16 keys of a chunk handled as
// two groups of 8. AVX2 has no masked loads for the HD tail, so it goes through zero-padded copies.
// Keys and values are f32, bf16 or fp8 e4m3 with row scales, 8 lanes widened in registers (load_kv).
#include <immintrin.h>

#include <math.h>
#include <cstring>

#include "cpu/attention.h"

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

inline float sum_lanes(__m256 v) {
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

inline float max_lanes(__m256 v) {
  const __m128 quarter = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_max_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_max_ss(pair, _mm_movehdup_ps(pair)));
}

// Lane j of the result is the sum of the lanes of v[j] (halves, pairs, singles, then key order).
inline __m256 sum_lanes_8(const __m256 (&v)[kLanes]) {
  __m256 halves[4], pairs[2];
  for (int i = 0; i < 4; i++) {
    halves[i] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20),
                              _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
  }
  for (int i = 0; i < 2; i++) {
    pairs[i] = _mm256_add_ps(_mm256_shuffle_ps(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  const __m256 singles = _mm256_add_ps(_mm256_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm256_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(3, 1, 3, 1)));
  // singles lane i holds key 2i, lane 4 + i key 2i + 1.
  return _mm256_permutevar8x32_ps(singles, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// The 8 scaled scores of one query row against 8 keys.
template <typename KV>
inline __m256 group_scores(const float* q, const KV* const* key, const float* factor, int64_t HD, float scale) {
  __m256 acc[kLanes];
#pragma GCC unroll 8
  for (int j = 0; j < kLanes; j++) acc[j] = _mm256_setzero_ps();
  for (int64_t d = 0; d < HD; d += kLanes) {
    const __m256 qd = load_partial(q + d, HD - d);
#pragma GCC unroll 8
    for (int j = 0; j < kLanes; j++) acc[j] = _mm256_fmadd_ps(qd, load_kv(key[j] + d, HD - d, factor[j]), acc[j]);
  }
  return _mm256_mul_ps(sum_lanes_8(acc), _mm256_set1_ps(scale));
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
  const __m256i lane_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  alignas(32) float p[kAttentionKeyChunk];
  for (int64_t r = 0; r < R; r++) {
    const int64_t seen = visible[r];
    if (seen == 0) continue;
    __m256 scores[kGroups], seen_mask[kGroups];
    float chunk_max = -INFINITY;
    for (int group = 0; group < kGroups; group++) {
      const __m256i seen_in_group = _mm256_set1_epi32(int32_t(seen - group * kLanes));
      seen_mask[group] = _mm256_castsi256_ps(_mm256_cmpgt_epi32(seen_in_group, lane_index));
      scores[group] = _mm256_set1_ps(-INFINITY);
      if (seen <= group * kLanes) continue;  // no visible key in this group
      const __m256 group_score = group_scores(q + r * HD, key + group * kLanes, key_factor + group * kLanes, HD, scale);
      scores[group] = _mm256_blendv_ps(scores[group], group_score, seen_mask[group]);
      chunk_max = larger(chunk_max, max_lanes(scores[group]));
    }
    const float new_max = larger(row_max[r], chunk_max);
    // e^0 is exactly 1: skip the call when the running max holds (most chunks).
    const float correction = new_max == row_max[r] ? 1.0f : expf(row_max[r] - new_max);
    __m256 total = _mm256_setzero_ps();
    for (int group = 0; group < kGroups; group++) {
      const __m256 shifted = _mm256_sub_ps(scores[group], _mm256_set1_ps(new_max));
      const __m256 weights = _mm256_and_ps(seen_mask[group], exp_nonpositive(shifted));
      _mm256_store_ps(p + group * kLanes, weights);
      total = _mm256_add_ps(total, weights);
    }
    row_sum[r] = row_sum[r] * correction + sum_lanes(total);
    row_max[r] = new_max;
    float* o = out + r * HD;
    for (int64_t d = 0; d < HD; d += kLanes) {
      __m256 acc = _mm256_mul_ps(load_partial(o + d, HD - d), _mm256_set1_ps(correction));
      for (int64_t j = 0; j < seen; j++) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), load_kv(v + j * HD + d, HD - d, value_factor[j]), acc);
      }
      store_partial(o + d, acc, HD - d);
    }
  }
}

}  // namespace

const AttentionKernels kAttentionAvx2 = {"avx2", attend_chunk_avx2<float>, attend_chunk_avx2<uint16_t>,
                                         attend_chunk_avx2<uint8_t>};

}  // namespace s3::cpu
