// simd_levels.h: the SIMD levels this machine can run (scalar always, then AVX2 and AVX-512 when
// the CPU has them), which the kernel tests iterate to check every dispatch target they can.
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

}  // namespace s3::tests
