// dtype.h: the tensor element types s3 reads and writes (the safetensors names), and exact scalar
// conversions between f32 and bf16, f16 and fp8 e4m3. The scalar conversions are header-only and
// S3_HOST_DEVICE so CUDA kernels use the very same rounding as the CPU code; bulk array versions
// live in dtype.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/host_device.h"

namespace s3 {

enum class DType { F32, F16, BF16, F8_E4M3, I32, I64, U8, BOOL };

// The safetensors name ("F32", "BF16", "F8_E4M3", ...).
const char* dtype_name(DType dtype);
// Bytes per element.
size_t dtype_size(DType dtype);
// Parses a safetensors dtype name; nullopt for names s3 does not support (F64, I8, F8_E5M2, ...).
std::optional<DType> parse_dtype(std::string_view name);

S3_HOST_DEVICE inline uint32_t f32_bits(float value) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(value);
#else
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

S3_HOST_DEVICE inline float f32_from_bits(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

// Rounds away the low `shift` bits of `magnitude` to nearest, ties to even (1 <= shift <= 31).
S3_HOST_DEVICE inline uint32_t round_shift_right_even(uint32_t magnitude, uint32_t shift) {
  uint32_t kept = magnitude >> shift;
  uint32_t rest = magnitude & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (kept & 1u))) kept += 1u;
  return kept;
}

// ---- bf16: the top 16 bits of an f32 ----

S3_HOST_DEVICE inline float bf16_to_f32(uint16_t bf16) { return f32_from_bits(uint32_t(bf16) << 16); }

// Round to nearest even; overflow rounds to inf as IEEE requires; NaN stays NaN (made quiet, so
// that truncating a signalling payload to zero can never turn it into inf).
S3_HOST_DEVICE inline uint16_t f32_to_bf16(float value) {
  uint32_t bits = f32_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040u);
  uint32_t lsb = (bits >> 16) & 1u;
  return uint16_t((bits + 0x7FFFu + lsb) >> 16);
}

// Stochastic rounding: up (away from zero) with probability (dropped low 16 bits) / 2^16, given
// 16 uniform random bits in `random16`, so the expected result is exactly `value`. Overflow rounds
// to inf; NaN stays NaN (quiet), as in f32_to_bf16.
S3_HOST_DEVICE inline uint16_t f32_to_bf16_stochastic(float value, uint32_t random16) {
  uint32_t bits = f32_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040u);
  return uint16_t((bits + (random16 & 0xFFFFu)) >> 16);
}

// ---- f16: IEEE binary16, 5 exponent bits (bias 15), 10 mantissa bits ----

S3_HOST_DEVICE inline float f16_to_f32(uint16_t f16) {
  uint32_t sign = uint32_t(f16 & 0x8000u) << 16;
  uint32_t exponent = (f16 >> 10) & 0x1Fu;
  uint32_t mantissa = f16 & 0x3FFu;
  if (exponent == 0x1Fu) return f32_from_bits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return f32_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa × 2^-24 is exact in f32.
  float magnitude = float(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

// Round to nearest even, including into the subnormal range; values from 65520 up become inf.
S3_HOST_DEVICE inline uint16_t f32_to_f16(float value) {
  uint32_t bits = f32_bits(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // 65520: halfway past 65504
  uint32_t exponent = magnitude >> 23;
  uint32_t mantissa = magnitude & 0x7FFFFFu;
  if (exponent >= 113u) {  // normal f16 (>= 2^-14); a carry out of the mantissa bumps the exponent
    return uint16_t(sign | round_shift_right_even(((exponent - 112u) << 23) | mantissa, 13));
  }
  if (magnitude <= 0x33000000u) return sign;  // <= 2^-25: half the smallest subnormal, ties to 0
  // Subnormal: count units of 2^-24; rounding up from the largest subnormal yields 0x400, the
  // smallest normal, which is the right encoding.
  uint32_t significand = mantissa | 0x800000u;
  return uint16_t(sign | round_shift_right_even(significand, 126u - exponent));
}

// ---- fp8 e4m3 (OCP E4M3FN): 4 exponent bits (bias 7), 3 mantissa bits, no infinities;
// 0x7F and 0xFF are NaN; the largest finite magnitude is 448, the smallest subnormal 2^-9. ----

constexpr float kFp8E4M3Max = 448.0f;

S3_HOST_DEVICE inline float fp8e4m3_to_f32(uint8_t fp8) {
  uint32_t sign = uint32_t(fp8 & 0x80u) << 24;
  uint32_t exponent = (fp8 >> 3) & 0xFu;
  uint32_t mantissa = fp8 & 0x7u;
  if (exponent == 0xFu && mantissa == 0x7u) return f32_from_bits(sign | 0x7FC00000u);
  if (exponent != 0) return f32_from_bits(sign | ((exponent + 120u) << 23) | (mantissa << 20));
  float magnitude = float(mantissa) * 0.001953125f;  // subnormal: mantissa × 2^-9, exact
  return sign ? -magnitude : magnitude;
}

// Round to nearest even, including subnormals; finite values beyond 448 and ±inf saturate to ±448
// (the "satfinite" conversion the FP8 path quantizes with); NaN becomes 0x7F with its sign.
S3_HOST_DEVICE inline uint8_t f32_to_fp8e4m3(float value) {
  uint32_t bits = f32_bits(value);
  uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return uint8_t(sign | 0x7Fu);
  if (magnitude >= 0x43E00000u) return uint8_t(sign | 0x7Eu);  // >= 448
  uint32_t exponent = magnitude >> 23;
  uint32_t mantissa = magnitude & 0x7FFFFFu;
  if (exponent >= 121u) {  // normal e4m3 (>= 2^-6); below 448 rounding cannot reach the NaN code
    return uint8_t(sign | round_shift_right_even(((exponent - 120u) << 23) | mantissa, 20));
  }
  if (magnitude <= 0x3A800000u) return sign;  // <= 2^-10: half the smallest subnormal, ties to 0
  uint32_t significand = mantissa | 0x800000u;  // subnormal: count units of 2^-9
  return uint8_t(sign | round_shift_right_even(significand, 141u - exponent));
}

// ---- bulk conversions over arrays (count elements; src and dst must not overlap) ----

void convert_bf16_to_f32(const uint16_t* src, float* dst, size_t count);
void convert_f32_to_bf16(const float* src, uint16_t* dst, size_t count);
void convert_f16_to_f32(const uint16_t* src, float* dst, size_t count);
void convert_f32_to_f16(const float* src, uint16_t* dst, size_t count);
void convert_fp8e4m3_to_f32(const uint8_t* src, float* dst, size_t count);
void convert_f32_to_fp8e4m3(const float* src, uint8_t* dst, size_t count);

}  // namespace s3
