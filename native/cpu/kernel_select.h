// kernel_select.h: the one dispatch rule every CPU kernel family follows. A family (matmul,
// matmul_nn, attention, attention rows, conversions) builds one table of function pointers per SIMD
// level; select_kernels picks the table for a level. The avx512bf16 level runs its own table where a
// family has one, else the AVX-512 table; the amx level its own, else the avx512bf16 choice. The level in use is chosen once at start from the CPU's
// features, capped by S3_SIMD (core/cpu_features.h).
#pragma once

#include "core/cpu_features.h"

namespace s3::cpu {

// A family's tables by level; avx512bf16 and amx may be left null (the level below then serves it).
template <typename Kernels>
struct KernelLevels {
  const Kernels* scalar = nullptr;
  const Kernels* avx2 = nullptr;
  const Kernels* avx512 = nullptr;
  const Kernels* avx512bf16 = nullptr;
  const Kernels* amx = nullptr;
};

// The table for `level`, or nullptr for a level the family was not built with.
template <typename Kernels>
const Kernels* select_kernels(const KernelLevels<Kernels>& levels, SimdLevel level) {
  switch (level) {
    case SimdLevel::Scalar:
      return levels.scalar;
    case SimdLevel::Avx2:
      return levels.avx2;
    case SimdLevel::Avx512:
      return levels.avx512;
    case SimdLevel::Avx512Bf16:
      return levels.avx512bf16 != nullptr ? levels.avx512bf16 : levels.avx512;
    case SimdLevel::Amx:
      if (levels.amx != nullptr) return levels.amx;
      return levels.avx512bf16 != nullptr ? levels.avx512bf16 : levels.avx512;
  }
  return nullptr;
}

}  // namespace s3::cpu
