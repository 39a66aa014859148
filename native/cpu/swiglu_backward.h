// swiglu_backward: out = silu(gate) · up.
#pragma once

#include <cstdint>

namespace s3::cpu {

// dgate, dup [N] overwritten.
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N);

}  // namespace s3::cpu
