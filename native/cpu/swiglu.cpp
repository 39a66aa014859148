// SwiGLU and the residual add; see swiglu.h.
#include "cpu/swiglu.h"

#include <cmath>

namespace s3::cpu {

void swiglu_forward(float* out, const float* gate, const float* up, int64_t N) {
  for (int64_t i = 0; i < N; i++) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void residual_forward(float* x, const float* delta, int64_t N) {
  for (int64_t i = 0; i < N; i++) x[i] += delta[i];
}

}  // namespace s3::cpu
