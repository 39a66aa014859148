// rope_backward.cpp: the implementation of cpu/rope_backward.h (see the header for the contract and layouts).
#include "cpu/rope_backward.h"

#include "core/ops/rope.h"

namespace s3::cpu {

void rope_backward(float* dx, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD) {
  const int64_t half = HD / 2;
  for (int64_t t = 0; t < T; t++) {
    const float* c = cos + t * half;
    const float* s = sin + t * half;
    for (int64_t h = 0; h < NH; h++) {
      float* head = dx + (t * NH + h) * HD;
      for (int64_t j = 0; j < half; j++) ops::rope_rotate_transpose(head[j], head[j + half], c[j], s[j]);
    }
  }
}

}  // namespace s3::cpu
