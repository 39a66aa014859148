// swiglu_backward.cpp: the implementation of cpu/swiglu_backward.h (see the header for the contract and layouts).
#include "cpu/swiglu_backward.h"

#include <cmath>

namespace s3::cpu {

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N) {
  for (int64_t i = 0; i < N; i++) {
    const float g = gate[i];
    const float sig = 1.0f / (1.0f + std::exp(-g));
    const float silu = g * sig;
    dup[i] = dout[i] * silu;
    dgate[i] = dout[i] * up[i] * sig * (1.0f + g * (1.0f - sig));
  }
}

}  // namespace s3::cpu
