// rope_backward: the transpose of rotate-half RoPE (cpu/rope.h tables), in place on the gradient.
#pragma once

#include <cstdint>

namespace s3::cpu {

void rope_backward(float* dx, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD);

}  // namespace s3::cpu
