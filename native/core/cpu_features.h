// cpu_features.h: what the CPU we run on can execute, detected once at run time (cpuid and
// xgetbv), and the SIMD level CPU kernels dispatch on. Prebuilt binaries are compiled for a
// baseline x86-64, so this is the only place that decides whether AVX2 or AVX-512 code may run.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace s3 {

// Ordered: each level implies the ones before it.
//   Avx2:       AVX2 + FMA + F16C.
//   Avx512:     Avx2 + AVX-512 F, BW, VL and DQ.
//   Avx512Bf16: Avx512 + AVX-512 BF16 (vdpbf16ps).
enum class SimdLevel { Scalar, Avx2, Avx512, Avx512Bf16 };

// "scalar", "avx2", "avx512", "avx512bf16" (the S3_SIMD spellings).
const char* simd_level_name(SimdLevel level);
std::optional<SimdLevel> parse_simd_level(std::string_view name);

// Every flag means the CPU implements the instructions AND the OS saves the register state they
// use (XCR0: YMM for AVX*, opmask/ZMM for AVX-512, tile config/data for AMX). On Linux, AMX tiles
// also need a per-process arch_prctl(ARCH_REQ_XCOMP_PERM) before first use.
struct CpuInfo {
  std::string brand;  // e.g. "Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz"; empty if unknown
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  bool avx512vnni = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  SimdLevel supported_level = SimdLevel::Scalar;  // the best level this machine runs
  SimdLevel level = SimdLevel::Scalar;            // what kernels use: supported_level capped by S3_SIMD
};

// Detects the CPU; simd_cap (the S3_SIMD value, or nullptr/"" for no cap) lowers `level` to at
// most that level, never raises it. An unknown simd_cap throws std::invalid_argument naming it.
CpuInfo detect_cpu_info(const char* simd_cap);

// detect_cpu_info(getenv("S3_SIMD")), computed once per process.
const CpuInfo& cpu_info();

}  // namespace s3
