// ops/adamw.h: one parameter's AdamW update, shared by train/adamw (the CPU) and cuda/adamw: the
// f32 arithmetic of the moments and the step, and the bf16 moments' stochastic rounding, so the
// two sides give the same bits for the same gradient, clip scale and step.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"
#include "core/philox.h"

namespace s3::ops {

// Philox stream of the bf16 moments' stochastic rounding (apart from the samplers' streams). The
// random bits of parameter i at update `step` are word i % 4 of philox_block(seed, i / 4, step,
// kAdamWRoundingStream): 16 bits for m, the next 16 for v.
constexpr uint32_t kAdamWRoundingStream = 0x41444D57u;  // "ADMW"

// The per-update constants: β1, β2, the bias corrections 1 − β^step, the rate, ε, the weight
// decay and the gradient's clip scale, all f32.
struct AdamWCoefficients {
  float b1, b2, c1, c2, lr, eps, wd, scale;
};

// g = grad·scale; m = β1·m + (1 − β1)·g; v = β2·v + (1 − β2)·g·g;
// param −= lr·(m/c1 / (√(v/c2) + ε) + wd·param), every operation rounded on its own.
S3_HOST_DEVICE inline void adamw_update(const AdamWCoefficients& k, float grad, float& m, float& v, float& param) {
  const float g = mul_rn(grad, k.scale);
  m = add_rn(mul_rn(k.b1, m), mul_rn(sub_rn(1.0f, k.b1), g));
  v = add_rn(mul_rn(k.b2, v), mul_rn(mul_rn(sub_rn(1.0f, k.b2), g), g));
#ifdef __CUDA_ARCH__
  const float mhat = __fdiv_rn(m, k.c1), vhat = __fdiv_rn(v, k.c2);
  const float step = __fdiv_rn(mhat, __fadd_rn(__fsqrt_rn(vhat), k.eps));
#else
  const float mhat = m / k.c1, vhat = v / k.c2;
  const float step = mhat / (std::sqrt(vhat) + k.eps);
#endif
  param = sub_rn(param, mul_rn(k.lr, add_rn(step, mul_rn(k.wd, param))));
}

// The same with bf16 moments (bits): widened, updated in f32, stored back with stochastic
// rounding from `random_bits` (its low 16 bits for m, its high 16 for v).
S3_HOST_DEVICE inline void adamw_update_bf16(const AdamWCoefficients& k, float grad, uint16_t& m, uint16_t& v,
                                             float& param, uint32_t random_bits) {
  float mi = bf16_to_f32(m), vi = bf16_to_f32(v);
  adamw_update(k, grad, mi, vi, param);
  m = f32_to_bf16_stochastic(mi, random_bits);
  v = f32_to_bf16_stochastic(vi, random_bits >> 16);
}

}  // namespace s3::ops
