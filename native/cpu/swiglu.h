// swiglu.h: the Qwen3 MLP's gate, silu(gate) · up, and the residual add that follows each block.
#pragma once

#include <cstdint>

namespace s3::cpu {

// out, gate, up: [N] (out may equal gate or up); out[i] = gate[i] / (1 + exp(-gate[i])) · up[i].
void swiglu_forward(float* out, const float* gate, const float* up, int64_t N);

// x, delta: [N]; x[i] += delta[i] (the residual stream accumulates each block's output).
void residual_forward(float* x, const float* delta, int64_t N);

}  // namespace s3::cpu
