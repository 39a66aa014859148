// Bulk dtype conversions on the CPU with SIMD paths chosen at run time (scalar, AVX2, AVX-512).
// Every path gives bit-identical results to the scalar conversions of core/dtype.h
// (round-to-nearest-even, NaN kept NaN), so the choice of path never changes a number.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"

namespace s3::cpu {

// One implementation of each conversion; `n` elements, any alignment, src and dst must not overlap.
struct ConvertKernels {
  const char* name;
  void (*bf16_to_f32)(const uint16_t* src, float* dst, size_t n);
  void (*f32_to_bf16)(const float* src, uint16_t* dst, size_t n);
  // dst[i] = f32_to_bf16(src[i] × scale), the product one IEEE f32 multiply (the training
  // attention's probabilities: exps × 1 / row total, rounded as a normalizing pass then rounding would).
  void (*f32_to_bf16_scaled)(const float* src, float scale, uint16_t* dst, size_t n);
  void (*fp8e4m3_to_f32)(const uint8_t* src, float* dst, size_t n);
};

// The kernels for one SIMD level (for tests and benchmarks); nullptr if this build lacks them.
const ConvertKernels* convert_kernels_for(SimdLevel level);

// The kernels for the level chosen at run time (cpu_info().simd_level).
const ConvertKernels& convert_kernels();

// The 256 values of FP8 E4M3 as f32, indexed by code; built in baseline code (convert.cpp) so the
// SIMD files call no inline header function (an out-of-line copy compiled with AVX-512 flags could
// be the one the linker keeps for every caller).
const float* fp8e4m3_table();

// Kernels compiled in the instruction-set-specific files (convert_avx2.cpp, convert_avx512.cpp).
// Their scalar tails call the baseline bulk converters of core/dtype.h for the same reason.
extern const ConvertKernels kConvertAvx2;
extern const ConvertKernels kConvertAvx512;

}  // namespace s3::cpu
