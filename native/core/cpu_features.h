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
//   Amx:        Avx512Bf16 + AMX-TILE and AMX-BF16 (tdpbf16ps), with the Linux kernel's
//               permission to use tile data granted to this process (arch_prctl).
enum class SimdLevel { Scalar, Avx2, Avx512, Avx512Bf16, Amx };

// "scalar", "avx2", "avx512", "avx512bf16", "amx" (the S3_SIMD spellings).
const char* simd_level_name(SimdLevel level);
std::optional<SimdLevel> parse_simd_level(std::string_view name);

// Every flag means the CPU implements the instructions AND the OS saves the register state they
// use (XCR0: YMM for AVX*, opmask/ZMM for AVX-512, tile config/data for AMX). On Linux, AMX tiles
// also need a per-process arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) before first use:
// detection requests it once where the CPU has AMX, and amx_permitted says whether it was granted.
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
  bool amx_permitted = false;  // the kernel granted this process tile data (never true without amx_tile)
  SimdLevel supported_level = SimdLevel::Scalar;  // the best level this machine runs
  SimdLevel level = SimdLevel::Scalar;            // what kernels use: supported_level capped by S3_SIMD
};

// Detects the CPU; simd_cap (the S3_SIMD value, or nullptr/"" for no cap) lowers `level` to at
// most that level, never raises it. An unknown simd_cap throws std::invalid_argument naming it.
CpuInfo detect_cpu_info(const char* simd_cap);

// detect_cpu_info(getenv("S3_SIMD")), computed once per process.
const CpuInfo& cpu_info();

}  // namespace s3
