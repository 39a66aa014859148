// ops/rmsnorm.h: the per-row arithmetic of Qwen3's RMSNorm, forward (cpu/rmsnorm, cuda/rmsnorm)
// and backward (cpu/rmsnorm_backward, cuda/rmsnorm_backward): the reductions (sums in double) are
// each side's own; what they become is one function, so a row's output has the same bits on both
// sides once the sums agree.
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

// Backward, in double throughout (y = w ⊙ x·r with r = 1/√(mean(x²) + eps)):
//   dx = r·w·dy − (r³·Σ(w·dy·x) / C)·x,   dw += Σ_rows dy·x·r.
// r from Σ x² over the row's C values.
S3_HOST_DEVICE inline double rmsnorm_backward_rstd(double sum_squares, int64_t C, float eps) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(__ddiv_rn(sum_squares, double(C)), double(eps))));
#else
  return 1.0 / std::sqrt(sum_squares / double(C) + double(eps));
#endif
}

// One element's term of the row's Σ w·dy·x.
S3_HOST_DEVICE inline double rmsnorm_backward_dot_term(float weight, float dy, float x) {
  return dmul_rn(dmul_rn(double(weight), double(dy)), double(x));
}

// One row's contribution dy·x·r to dw of its element.
S3_HOST_DEVICE inline double rmsnorm_backward_dweight_term(float dy, float x, double rstd) {
  return dmul_rn(dmul_rn(double(dy), double(x)), rstd);
}

// r³·dot / C, the coefficient of x in dx.
S3_HOST_DEVICE inline double rmsnorm_backward_coef(double rstd, double dot, int64_t C) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(__dmul_rn(__dmul_rn(__dmul_rn(rstd, rstd), rstd), dot), double(C));
#else
  return rstd * rstd * rstd * dot / double(C);
#endif
}

S3_HOST_DEVICE inline float rmsnorm_backward_dx(double rstd, double coef, float weight, float dy, float x) {
  return float(dsub_rn(dmul_rn(dmul_rn(rstd, double(weight)), double(dy)), dmul_rn(coef, double(x))));
}

}  // namespace s3::ops
