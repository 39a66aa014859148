// AVX2 bulk conversions (compiled with -mavx2 -mfma -mf16c; called only after run-time detection).
#include <immintrin.h>

#include "core/dtype.h"
#include "cpu/convert.h"

namespace s3::cpu {
namespace {

void bf16_to_f32_avx2(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i wide = _mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16);
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(wide));
  }
  convert_bf16_to_f32(src + i, dst + i, n - i);
}

// Round-to-nearest-even on the integer bits: add 0x7FFF + lsb, keep the high half; NaNs are
// quieted instead (adding could carry a NaN into infinity).
void f32_to_bf16_avx2(const float* src, uint16_t* dst, size_t n) {
  const __m256i exponent_mask = _mm256_set1_epi32(0x7F800000);
  const __m256i mantissa_mask = _mm256_set1_epi32(0x007FFFFF);
  const __m256i quiet_bit = _mm256_set1_epi32(0x00400000);
  const __m256i rounding_bias = _mm256_set1_epi32(0x7FFF);
  const __m256i one = _mm256_set1_epi32(1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i bits = _mm256_castps_si256(_mm256_loadu_ps(src + i));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), one);
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(rounding_bias, lsb)), 16);
    const __m256i is_nan = _mm256_andnot_si256(
        _mm256_cmpeq_epi32(_mm256_and_si256(bits, mantissa_mask), _mm256_setzero_si256()),
        _mm256_cmpeq_epi32(_mm256_and_si256(bits, exponent_mask), exponent_mask));
    const __m256i quiet_nan = _mm256_srli_epi32(_mm256_or_si256(bits, quiet_bit), 16);
    rounded = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
    // Pack 8 × 32-bit (values < 65536) into 8 × 16-bit.
    const __m128i lo = _mm256_castsi256_si128(rounded);
    const __m128i hi = _mm256_extracti128_si256(rounded, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_packus_epi32(lo, hi));
  }
  convert_f32_to_bf16(src + i, dst + i, n - i);
}

// The products in blocks on the stack (plain multiplies: nothing to fuse), then rounded as above.
void f32_to_bf16_scaled_avx2(const float* src, float scale, uint16_t* dst, size_t n) {
  constexpr size_t kBlock = 256;
  alignas(32) float scaled[kBlock];
  const __m256 factor = _mm256_set1_ps(scale);
  for (size_t i0 = 0; i0 < n; i0 += kBlock) {
    const size_t count = n - i0 < kBlock ? n - i0 : kBlock;
    size_t i = 0;
    for (; i + 8 <= count; i += 8) _mm256_store_ps(scaled + i, _mm256_mul_ps(_mm256_loadu_ps(src + i0 + i), factor));
    for (; i < count; i++) scaled[i] = src[i0 + i] * scale;
    f32_to_bf16_avx2(scaled, dst + i0, count);
  }
}

void fp8e4m3_to_f32_avx2(const uint8_t* src, float* dst, size_t n) {
  const float* table = fp8e4m3_table();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
    const __m256i index = _mm256_cvtepu8_epi32(bytes);
    _mm256_storeu_ps(dst + i, _mm256_i32gather_ps(table, index, 4));
  }
  for (; i < n; ++i) dst[i] = table[src[i]];
}

}  // namespace

const ConvertKernels kConvertAvx2 = {"avx2", bf16_to_f32_avx2, f32_to_bf16_avx2, f32_to_bf16_scaled_avx2,
                                     fp8e4m3_to_f32_avx2};

}  // namespace s3::cpu
