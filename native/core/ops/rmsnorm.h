// ops/rmsnorm.h: the per-row arithmetic of Qwen3's RMSNorm, shared by cpu/rmsnorm and
// cuda/rmsnorm: the reduction (a sum of squares in double) is each side's own; what it becomes is
// one function, so a row's output has the same bits on both sides once the sums agree.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

// 1 / sqrt(mean(x²) + eps) from Σ x² (accumulated in double) over C values, in f32 as Hugging Face.
S3_HOST_DEVICE inline float rmsnorm_inv_rms(double sum_squares, int64_t C, float eps) {
  const float variance = float(sum_squares / double(C));
#ifdef __CUDA_ARCH__
  return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(variance, eps)));
#else
  return 1.0f / std::sqrt(variance + eps);
#endif
}

// weight · (x · inv_rms): the normalized value is rounded first, then weighted (no +1 offset).
S3_HOST_DEVICE inline float rmsnorm_apply(float x, float inv_rms, float weight) {
  return mul_rn(weight, mul_rn(x, inv_rms));
}

}  // namespace s3::ops
