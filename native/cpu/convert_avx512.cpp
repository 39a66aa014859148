// AVX-512 bulk conversions (compiled with -mavx512f/bw/vl; called only after run-time detection).
// f32→bf16 rounds with integer arithmetic (f32_to_bf16_avx512.h).
#include <immintrin.h>

#include "core/dtype.h"
#include "cpu/convert.h"
#include "cpu/f32_to_bf16_avx512.h"

namespace s3::cpu {
namespace {

void bf16_to_f32_avx512(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m512i wide = _mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16);
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(wide));
  }
  if (i < n) {
    const __mmask16 mask = __mmask16((1u << (n - i)) - 1);
    const __m256i half = _mm256_maskz_loadu_epi16(mask, src + i);
    const __m512i wide = _mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16);
    _mm512_mask_storeu_ps(dst + i, mask, _mm512_castsi512_ps(wide));
  }
}

inline __m256i f32_to_bf16_block(__m512i bits) { return _mm512_cvtepi32_epi16(f32_to_bf16_lanes(bits)); }

void f32_to_bf16_avx512(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), f32_to_bf16_block(bits));
  }
  if (i < n) {
    const __mmask16 mask = __mmask16((1u << (n - i)) - 1);
    const __m512i bits = _mm512_castps_si512(_mm512_maskz_loadu_ps(mask, src + i));
    _mm256_mask_storeu_epi16(dst + i, mask, f32_to_bf16_block(bits));
  }
}

void f32_to_bf16_scaled_avx512(const float* src, float scale, uint16_t* dst, size_t n) {
  const __m512 factor = _mm512_set1_ps(scale);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_mul_ps(_mm512_loadu_ps(src + i), factor));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), f32_to_bf16_block(bits));
  }
  if (i < n) {
    const __mmask16 mask = __mmask16((1u << (n - i)) - 1);
    const __m512i bits = _mm512_castps_si512(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, src + i), factor));
    _mm256_mask_storeu_epi16(dst + i, mask, f32_to_bf16_block(bits));
  }
}

void fp8e4m3_to_f32_avx512(const uint8_t* src, float* dst, size_t n) {
  const float* table = fp8e4m3_table();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm512_storeu_ps(dst + i, _mm512_i32gather_ps(_mm512_cvtepu8_epi32(bytes), table, 4));
  }
  for (; i < n; ++i) dst[i] = table[src[i]];
}

}  // namespace

const ConvertKernels kConvertAvx512 = {"avx512", bf16_to_f32_avx512, f32_to_bf16_avx512, f32_to_bf16_scaled_avx512,
                                       fp8e4m3_to_f32_avx512};

}  // namespace s3::cpu
