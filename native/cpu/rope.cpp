// Rotary position embedding; see rope.h.
#include "cpu/rope.h"

#include <cmath>

#include "core/ops/rope.h"

namespace s3::cpu {

void rope_tables(float* cos, float* sin, const int64_t* positions, int64_t T, int64_t HD, float theta) {
  const int64_t half = HD / 2;
  for (int64_t t = 0; t < T; t++) {
    const float position = float(positions[t]);
    for (int64_t j = 0; j < half; j++) {
      const float inv_freq = 1.0f / std::pow(theta, float(2 * j) / float(HD));
      const float angle = position * inv_freq;
      cos[t * half + j] = float(std::cos(double(angle)));
      sin[t * half + j] = float(std::sin(double(angle)));
    }
  }
}

void rope_forward(float* x, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD) {
  const int64_t half = HD / 2;
  for (int64_t t = 0; t < T; t++) {
    const float* c = cos + t * half;
    const float* s = sin + t * half;
    for (int64_t h = 0; h < NH; h++) {
      float* head = x + (t * NH + h) * HD;
      for (int64_t j = 0; j < half; j++) ops::rope_rotate(head[j], head[j + half], c[j], s[j]);
    }
  }
}

}  // namespace s3::cpu
