// swiglu.h: the Qwen3 MLP's gate, silu(gate) · up, and the residual add that follows each block.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace s3::cpu {

// One SwiGLU implementation per SIMD level, all from swiglu_lanes.h: the same bits at every level.
struct SwigluKernels {
  const char* name;
  void (*forward)(float* out, const float* gate, const float* up, int64_t N);
  // cpu/swiglu_backward.h's contract.
  void (*backward)(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N);
};

// out, gate, up: [N] (out may equal gate or up); out[i] = gate[i] / (1 + exp(-gate[i])) · up[i],
// exp as swiglu_lanes.h computes it.
void swiglu_forward(float* out, const float* gate, const float* up, int64_t N);

// x, delta: [N]; x[i] += delta[i] (the residual stream accumulates each block's output).
void residual_forward(float* x, const float* delta, int64_t N);

const SwigluKernels* swiglu_kernels_for(SimdLevel level);
const SwigluKernels& swiglu_kernels();

extern const SwigluKernels kSwigluAvx2;
extern const SwigluKernels kSwigluAvx512;

}  // namespace s3::cpu
