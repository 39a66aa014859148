// f32_to_bf16_avx512.h: 16 f32 values rounded to BF16 the way core/dtype.h's f32_to_bf16 does
// (nearest even, NaN made quiet), with integer arithmetic rather than VCVTNEPS2BF16, which flushes
// subnormal inputs to zero and would disagree with the scalar reference. Shared by the AVX-512
// files that round to BF16 (convert_avx512.cpp, matmul_nn_avx512bf16.cpp). Include only from files
// compiled with AVX-512 flags; internal linkage, as sum_lanes_avx512.h explains.
#pragma once

#include <immintrin.h>

namespace s3::cpu {
namespace {

// The BF16 bits of each lane of `bits` (f32 bit patterns) in that lane's low 16 bits, the high 16 zero.
inline __m512i f32_to_bf16_lanes(__m512i bits) {
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb)), 16);
  const __m512i exponent = _mm512_and_si512(bits, _mm512_set1_epi32(0x7F800000));
  const __mmask16 is_nan = _mm512_cmpeq_epi32_mask(exponent, _mm512_set1_epi32(0x7F800000)) &
                           _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x007FFFFF));
  const __m512i quiet_nan = _mm512_srli_epi32(_mm512_or_si512(bits, _mm512_set1_epi32(0x00400000)), 16);
  return _mm512_mask_blend_epi32(is_nan, rounded, quiet_nan);
}

}  // namespace
}  // namespace s3::cpu
