// SwiGLU and the residual add; see swiglu.h.
#include "cpu/swiglu.h"

#include "core/ops/swiglu.h"

namespace s3::cpu {

void swiglu_forward(float* out, const float* gate, const float* up, int64_t N) {
  for (int64_t i = 0; i < N; i++) out[i] = ops::silu_mul(gate[i], up[i]);
}

void residual_forward(float* x, const float* delta, int64_t N) {
  for (int64_t i = 0; i < N; i++) x[i] += delta[i];
}

}  // namespace s3::cpu
