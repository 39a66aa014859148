// swiglu_backward.cpp: the implementation of cpu/swiglu_backward.h: the level's table of
// cpu/swiglu.h (swiglu_lanes.h, the forward's own e^x; the same bits at every level).
#include "cpu/swiglu_backward.h"

#include "cpu/swiglu.h"

namespace s3::cpu {

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N) {
  swiglu_kernels().backward(dgate, dup, dout, gate, up, N);
}

}  // namespace s3::cpu
