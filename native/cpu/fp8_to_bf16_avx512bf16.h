// fp8_to_bf16_avx512bf16.h: 32 FP8 e4m3 codes widened, exactly, to the BF16 values fp8 / 256, shared
// by the kernels that multiply FP8 weights as BF16 (matmul_avx512bf16.cpp, the AMX matmul). Include
// only from files compiled with the AVX512-BF16 flags. Internal linkage: each file compiles its own
// copy, and no copy can be the one the linker keeps for another file.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace s3::cpu {
namespace {

// The low `count` of 32 lanes (all of them from 32 on).
inline __mmask32 value_mask(int64_t count) { return count >= 32 ? ~__mmask32(0) : __mmask32((1u << count) - 1u); }

// fp8 → f16 is a bit move that yields fp8 / 256 (subnormals included: the sign goes to bit 15, the
// 7 exponent/mantissa bits to bits 13..7), f16 → f32 is exact, and f32 → BF16 is exact as e4m3 has
// 3 mantissa bits and fp8 / 256 ≥ 2⁻¹⁷ is normal. The NaN codes 0x7F/0xFF come out finite, as at the
// other levels; checkpoints do not contain them.
inline __m512i widen_fp8(__m256i codes) {
  const __m512i wide = _mm512_cvtepu8_epi16(codes);
  const __m512i half = _mm512_slli_epi16(_mm512_add_epi16(wide, _mm512_and_si512(wide, _mm512_set1_epi16(0x80))), 7);
  const __m512 low = _mm512_cvtph_ps(_mm512_castsi512_si256(half));
  const __m512 high = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(half, 1));
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low));
}

}  // namespace
}  // namespace s3::cpu
