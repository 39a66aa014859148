// Stand-in for cuda_bf16.h in the CPU emulation: the pair type and its round-to-nearest-even packing.
#pragma once

#include "core/dtype.h"
#include "cuda_runtime.h"

struct __nv_bfloat162 { uint16_t x, y; };
inline __nv_bfloat162 __floats2bfloat162_rn(float low, float high) { return {s3::f32_to_bf16(low), s3::f32_to_bf16(high)}; }
