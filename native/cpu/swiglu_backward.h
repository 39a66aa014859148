// swiglu_backward: out = silu(gate) · up.
#pragma once

#include <cstdint>

namespace s3::cpu {

// dgate, dup [N] overwritten: core/ops/swiglu.h's silu_mul_backward with σ = 1 / (1 + e^−gate) from
// the forward's e^x (cpu/swiglu_lanes.h), the same bits at every SIMD level.
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N);

}  // namespace s3::cpu
