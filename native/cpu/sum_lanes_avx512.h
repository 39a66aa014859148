// sum_lanes_avx512.h: the fixed tree that adds a 16-lane f32 accumulator's lanes into one value,
// shared by the AVX-512 matmul and attention files: lane i + lane i+8, then + 4, + 2, + 1 apart.
// sum_lanes runs the tree on one accumulator; sum_lanes_16 runs it on 16 at once by transposing
// as it adds (each round adds the same pairs of partial sums, of one accumulator each), so many
// accumulators reduce in a fraction of the instructions and every sum has the same bits.
// Include only from files compiled with AVX-512 flags. Internal linkage: each file compiles its own
// copy, and no copy can be the one the linker keeps for another file.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace s3::cpu {
namespace {

inline float sum_lanes(__m512 v) {
  const __m256 half = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

// The tree's first round for two accumulators: lanes 0–7 hold a's i + (i + 8), lanes 8–15 b's.
inline __m512 add_halves(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                       _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}

// Lane j of the result is sum_lanes(v[j]), given halves[i] = add_halves(v[2i], v[2i + 1]): three
// more rounds of pairwise shuffle-and-add (128-bit quarters, pairs, singles), then one permute
// into order.
inline __m512 sum_lanes_16(const __m512 (&halves)[8]) {
  __m512 quarters[4], pairs[2];
  for (int i = 0; i < 4; i++) {
    quarters[i] = _mm512_add_ps(_mm512_shuffle_f32x4(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_f32x4(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  for (int i = 0; i < 2; i++) {
    pairs[i] = _mm512_add_ps(_mm512_shuffle_ps(quarters[2 * i], quarters[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(quarters[2 * i], quarters[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  const __m512 singles = _mm512_add_ps(_mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(3, 1, 3, 1)));
  // singles lane 4q + i holds accumulator 4i + q.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, singles);
}

// sums[i] = sum_lanes(acc[i]) for the N accumulators, 16 at a time (a last group of fewer is
// padded with zero accumulators, whose rounds add only zeros).
template <int N>
inline void sum_lanes_all(const __m512* acc, float* sums) {
#pragma GCC unroll 4
  for (int first = 0; first < N; first += 16) {
    __m512 halves[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      const int a = first + 2 * i, b = a + 1;
      halves[i] = add_halves(a < N ? acc[a] : _mm512_setzero_ps(), b < N ? acc[b] : _mm512_setzero_ps());
    }
    alignas(64) float group[16];
    _mm512_store_ps(group, sum_lanes_16(halves));
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) {
      if (first + i < N) sums[first + i] = group[i];
    }
  }
}

// out[r × ldo + c] = sum_lanes(acc[r][c]) for r < R, c < cols_valid (≤ C ≤ 16): one masked store
// per row (an element loop here compiled to a memcpy call per row).
template <int R, int C>
inline void store_row_sums(const __m512 (&acc)[R][C], float* out, int64_t ldo, int cols_valid) {
  static_assert(C <= 16, "a row of sums fits one vector");
  float sums[R][C];
  sum_lanes_all<R * C>(&acc[0][0], &sums[0][0]);
  const __mmask16 mask = __mmask16((1u << cols_valid) - 1u);
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(out + r * ldo, mask, _mm512_maskz_loadu_ps(mask, sums[r]));
}

}  // namespace
}  // namespace s3::cpu
