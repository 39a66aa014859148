// ops/swiglu.h: the Qwen3 MLP's gate of one element, silu(gate) · up, for cuda/swiglu, and its
// backward, shared by cpu/swiglu_backward and cuda/swiglu_backward. The CPU forward runs the vector
// form of cpu/swiglu_lanes.h (its own e^x, the same bits at every SIMD level). expf differs in its
// last bit between glibc, CUDA's libdevice and that e^x, so the sides agree to f32 rounding here,
// not bit for bit.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace s3::ops {

S3_HOST_DEVICE inline float silu_mul(float gate, float up) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(__fdiv_rn(gate, __fadd_rn(1.0f, expf(-gate))), up);
#else
  return gate / (1.0f + std::exp(-gate)) * up;
#endif
}

// With σ = 1/(1 + exp(−gate)): dup = dy·gate·σ, dgate = dy·up·σ·(1 + gate·(1 − σ)), each product
// rounded on its own in this order.
S3_HOST_DEVICE inline void silu_mul_backward(float gate, float up, float dy, float& dgate, float& dup) {
#ifdef __CUDA_ARCH__
  const float sigmoid = __fdiv_rn(1.0f, __fadd_rn(1.0f, expf(-gate)));
#else
  const float sigmoid = 1.0f / (1.0f + std::exp(-gate));
#endif
  dup = mul_rn(dy, mul_rn(gate, sigmoid));
  dgate = mul_rn(mul_rn(mul_rn(dy, up), sigmoid), add_rn(1.0f, mul_rn(gate, sub_rn(1.0f, sigmoid))));
}

}  // namespace s3::ops
