// swiglu_backward.cpp: the implementation of cpu/swiglu_backward.h (see the header for the contract and layouts).
#include "cpu/swiglu_backward.h"

#include "core/ops/swiglu.h"

namespace s3::cpu {

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N) {
  for (int64_t i = 0; i < N; i++) ops::silu_mul_backward(gate[i], up[i], dout[i], dgate[i], dup[i]);
}

}  // namespace s3::cpu
