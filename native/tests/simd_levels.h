// simd_levels.h: the SIMD levels this machine can run (scalar always, then AVX2 and AVX-512 when
// the CPU has them), which the kernel tests iterate to check every dispatch target they can; the
// avx512bf16 level is added only for the families with kernels of their own there (the forward
// matmul, and attention over a bf16 cache), as the others run their AVX-512 table at that level.
#pragma once

#include <vector>

#include "core/cpu_features.h"

namespace s3::tests {

inline std::vector<s3::SimdLevel> runnable_levels() {
  std::vector<s3::SimdLevel> levels = {s3::SimdLevel::Scalar};
  const s3::SimdLevel best = s3::cpu_info().supported_level;
  if (best >= s3::SimdLevel::Avx2) levels.push_back(s3::SimdLevel::Avx2);
  if (best >= s3::SimdLevel::Avx512) levels.push_back(s3::SimdLevel::Avx512);
  return levels;
}

// runnable_levels() plus avx512bf16 when the CPU has AVX512-BF16.
inline std::vector<s3::SimdLevel> runnable_levels_with_bf16() {
  std::vector<s3::SimdLevel> levels = runnable_levels();
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Avx512Bf16) levels.push_back(s3::SimdLevel::Avx512Bf16);
  return levels;
}

}  // namespace s3::tests
