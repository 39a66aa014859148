// matmul_sum_lanes_avx512.h: the fixed tree that adds a 16-lane f32 accumulator's lanes into one
// output element, shared by the AVX-512 matmul files (matmul_avx512.cpp, matmul_avx512bf16.cpp).
// Include only from files compiled with AVX-512 flags. Internal linkage: each file compiles its own
// copy, and no copy can be the one the linker keeps for another file.
#pragma once

#include <immintrin.h>

namespace s3::cpu {
namespace {

inline float sum_lanes(__m512 v) {
  const __m256 half = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

}  // namespace
}  // namespace s3::cpu
