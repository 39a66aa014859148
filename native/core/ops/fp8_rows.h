// ops/fp8_rows.h: quantizing one row of the FP8 KV cache (one f32 scale per position and KV head),
// shared by cpu::quantize_fp8_row and the CUDA KV cache store. The row's largest magnitude (an exact
// reduction, so any order gives the same value) and whether every value is finite decide the scale;
// each value is then encoded on its own, so both sides write the same bytes and scales.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"

namespace s3::ops {

// max|x| / 448; 1 when that is 0 (a row of zeros, or magnitudes too small for a nonzero scale: the
// bytes are then all 0); NaN when a value is inf or NaN, so the row dequantizes to NaN as its f32
// values would poison attention.
S3_HOST_DEVICE inline float fp8_row_scale(float max_abs, bool all_finite) {
  if (!all_finite) return f32_from_bits(0x7FC00000u);
#ifdef __CUDA_ARCH__
  const float scale = __fdiv_rn(max_abs, kFp8E4M3Max);
#else
  const float scale = max_abs / kFp8E4M3Max;
#endif
  return scale == 0.0f ? 1.0f : scale;
}

// The byte of x in a row of `scale` (0 in a non-finite row: never a NaN code).
S3_HOST_DEVICE inline uint8_t fp8_row_encode(float x, float scale, bool all_finite) {
#ifdef __CUDA_ARCH__
  return all_finite ? f32_to_fp8e4m3(__fdiv_rn(x, scale)) : uint8_t(0);
#else
  return all_finite ? f32_to_fp8e4m3(x / scale) : uint8_t(0);
#endif
}

}  // namespace s3::ops
