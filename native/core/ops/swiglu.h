// ops/swiglu.h: the Qwen3 MLP's gate of one element, silu(gate) · up, shared by cpu/swiglu and
// cuda/swiglu. expf differs in its last bit between glibc and CUDA's libdevice, so the two sides
// agree to f32 rounding here, not bit for bit.
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

}  // namespace s3::ops
