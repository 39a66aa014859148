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

// out[r × ldo + c] = sum_lanes(acc[r][c]) for r < R, c < cols_valid (≤ C ≤ 16): the sums of 16
// accumulators at a time stay in a vector (lane i: accumulator r·C + c of the group), and each row's
// C lanes are moved to the front with one VALIGND (two groups' vectors where the row spans both) and
// stored with one masked store: no round trip through a small array, whose rows, reloaded from
// scalar stores (a load no store can forward to), made 512-row matmuls with K = 1,024 5–10% slower
// on Zen 4 for the same bits (docs/benchmarks.md, "Row sums stored straight from registers").
template <int R, int C>
inline void store_row_sums(const __m512 (&acc)[R][C], float* out, int64_t ldo, int cols_valid) {
  static_assert(C <= 16, "a row of sums fits one vector");
  constexpr int kGroups = (R * C + 15) / 16;
  const __m512* flat = &acc[0][0];
  __m512i sums[kGroups + 1];
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; g++) {
    __m512 halves[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      const int a = 16 * g + 2 * i, b = a + 1;
      halves[i] = add_halves(a < R * C ? flat[a] : _mm512_setzero_ps(), b < R * C ? flat[b] : _mm512_setzero_ps());
    }
    sums[g] = _mm512_castps_si512(sum_lanes_16(halves));
  }
  sums[kGroups] = _mm512_setzero_si512();  // read (and ignored) only by a row ending at a group's end
  const __mmask16 mask = __mmask16((1u << cols_valid) - 1u);
#pragma GCC unroll 16
  for (int r = 0; r < R; r++) {
    const int group = r * C / 16, lane = r * C % 16;
    __m512i row = sums[group];
    // VALIGND's shift is an immediate: one case per lane offset, all but one folded away.
    switch (lane) {
#define S3_ROW_AT(n) \
  case n: row = _mm512_alignr_epi32(sums[group + 1], sums[group], n); break;
      S3_ROW_AT(1) S3_ROW_AT(2) S3_ROW_AT(3) S3_ROW_AT(4) S3_ROW_AT(5) S3_ROW_AT(6) S3_ROW_AT(7) S3_ROW_AT(8)
      S3_ROW_AT(9) S3_ROW_AT(10) S3_ROW_AT(11) S3_ROW_AT(12) S3_ROW_AT(13) S3_ROW_AT(14) S3_ROW_AT(15)
#undef S3_ROW_AT
      default: break;
    }
    _mm512_mask_storeu_ps(out + r * ldo, mask, _mm512_castsi512_ps(row));
  }
}

}  // namespace
}  // namespace s3::cpu
