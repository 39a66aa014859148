// fp8_to_bf16_avx512bf16.h: 32 FP8 e4m3 codes widened, exactly, to the BF16 values fp8 / 256, shared
// by the kernels that multiply FP8 weights as BF16 (matmul_avx512bf16.cpp,
// matmul_panels_avx512bf16.cpp, the AMX matmul). Include only from files compiled with the
// AVX512-BF16 flags. Internal linkage: each file compiles its own copy, and no copy can be the one
// the linker keeps for another file.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace s3::cpu {
namespace {

// The low `count` of 32 lanes (all of them from 32 on).
inline __mmask32 value_mask(int64_t count) { return count >= 32 ? ~__mmask32(0) : __mmask32((1u << count) - 1u); }

// Integer moves only (no conversions): a normal code's 4 exponent and 3 mantissa bits go to
// BF16 bits 10..4 and the exponent is rebased by 127 - 7 - 8 = 112 (fp8 / 256); a subnormal code's
// value m × 2⁻⁹ / 256 = m × 2⁻¹⁷ is normal in BF16 and comes from an 8-entry table; the sign goes
// from bit 7 to bit 15. Every value is exact (fp8 / 256 ≥ 2⁻¹⁷ is normal in BF16). The NaN codes
// 0x7F/0xFF come out finite (±1.875, as 480 / 256), as at the other levels; checkpoints do not
// contain them.
inline __m512i widen_fp8(__m256i codes) {
  const __m512i wide = _mm512_cvtepu8_epi16(codes);
  const __m512i normal = _mm512_add_epi16(_mm512_and_si512(_mm512_slli_epi16(wide, 4), _mm512_set1_epi16(0x7F0)),
                                          _mm512_set1_epi16(0x3800));
  const __mmask32 subnormal = _mm512_testn_epi16_mask(wide, _mm512_set1_epi16(0x78));
  // m × 2⁻¹⁷ for m = 0..7 as BF16 (vpermw reads an index's low 5 bits: m, for a subnormal code).
  const __m512i table = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0x3860, 0x3840, 0x3820, 0x3800, 0x37C0, 0x3780, 0x3700, 0);
  const __m512i magnitude = _mm512_mask_permutexvar_epi16(normal, subnormal, wide, table);
  // magnitude | (the code's bit 7 at bit 15)
  return _mm512_ternarylogic_epi32(magnitude, _mm512_slli_epi16(wide, 8), _mm512_set1_epi16(int16_t(0x8000)), 0xF8);
}

}  // namespace
}  // namespace s3::cpu
