// sum_lanes_avx2.h: the fixed tree that adds an 8-lane f32 accumulator's lanes into one value,
// shared by the AVX2 matmul and attention files: lane i + lane i+4, then + 2, + 1 apart.
// sum_lanes runs the tree on one accumulator; sum_lanes_8 runs it on 8 at once by transposing as
// it adds (each round adds the same pairs of partial sums, of one accumulator each), so many
// accumulators reduce in a fraction of the instructions and every sum has the same bits.
// Include only from files compiled with AVX2 flags; internal linkage, as sum_lanes_avx512.h explains.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace s3::cpu {
namespace {

inline float sum_lanes(__m256 v) {
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

// The tree's first round for two accumulators: lanes 0–3 hold a's i + (i + 4), lanes 4–7 b's.
inline __m256 add_halves(__m256 a, __m256 b) {
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

// Lane j of the result is sum_lanes(v[j]), given halves[i] = add_halves(v[2i], v[2i + 1]): pairs,
// singles, then one permute into order.
inline __m256 sum_lanes_8(const __m256 (&halves)[4]) {
  __m256 pairs[2];
  for (int i = 0; i < 2; i++) {
    pairs[i] = _mm256_add_ps(_mm256_shuffle_ps(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(halves[2 * i], halves[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  const __m256 singles = _mm256_add_ps(_mm256_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm256_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(3, 1, 3, 1)));
  // singles lane i holds accumulator 2i, lane 4 + i accumulator 2i + 1.
  return _mm256_permutevar8x32_ps(singles, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// sums[i] = sum_lanes(acc[i]) for the N accumulators, 8 at a time (a last group of fewer is padded
// with zero accumulators, whose rounds add only zeros).
template <int N>
inline void sum_lanes_all(const __m256* acc, float* sums) {
#pragma GCC unroll 4
  for (int first = 0; first < N; first += 8) {
    __m256 halves[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
      const int a = first + 2 * i, b = a + 1;
      halves[i] = add_halves(a < N ? acc[a] : _mm256_setzero_ps(), b < N ? acc[b] : _mm256_setzero_ps());
    }
    alignas(32) float group[8];
    _mm256_store_ps(group, sum_lanes_8(halves));
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      if (first + i < N) sums[first + i] = group[i];
    }
  }
}

// out[r × ldo + c] = sum_lanes(acc[r][c]) for r < R, c < cols_valid (≤ C ≤ 8): one masked store
// per row (an element loop here compiled to a memcpy call per row).
template <int R, int C>
inline void store_row_sums(const __m256 (&acc)[R][C], float* out, int64_t ldo, int cols_valid) {
  static_assert(C <= 8, "a row of sums fits one vector");
  float sums[R][C];
  sum_lanes_all<R * C>(&acc[0][0], &sums[0][0]);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols_valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) _mm256_maskstore_ps(out + r * ldo, mask, _mm256_maskload_ps(sums[r], mask));
}

}  // namespace
}  // namespace s3::cpu
