// ops/rope.h: rotate-half (NeoX) rotary embedding of one pair, shared by cpu/rope and cuda/rope,
// and its transpose, shared by cpu/rope_backward and cuda/rope_backward: dimension j rotates with
// j + HD/2 by the angle whose cos and sin the tables hold.
#pragma once

#include "core/host_device.h"

namespace s3::ops {

// (first, second) = (x[j], x[j + HD/2]) rotated by (c, s) = (cos, sin):
// x'[j] = first·c − second·s,  x'[j + HD/2] = second·c + first·s, each product rounded on its own.
S3_HOST_DEVICE inline void rope_rotate(float& first, float& second, float c, float s) {
  const float a = first, b = second;
  first = sub_rn(mul_rn(a, c), mul_rn(b, s));
  second = add_rn(mul_rn(b, c), mul_rn(a, s));
}

// The transpose (the rotation by −angle), applied to the gradient of a rotated pair:
// d[j] = first·c + second·s,  d[j + HD/2] = second·c − first·s.
S3_HOST_DEVICE inline void rope_rotate_transpose(float& first, float& second, float c, float s) {
  const float a = first, b = second;
  first = add_rn(mul_rn(a, c), mul_rn(b, s));
  second = sub_rn(mul_rn(b, c), mul_rn(a, s));
}

}  // namespace s3::ops
