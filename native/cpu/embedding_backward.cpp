// embedding_backward.cpp: the implementation of cpu/embedding_backward.h (see the header for the contract and layouts).
#include "cpu/embedding_backward.h"

namespace s3::cpu {

void embedding_backward(float* dtable, const float* dout, const int32_t* tokens, int64_t T, int64_t C) {
  for (int64_t t = 0; t < T; t++) {
    float* row = dtable + int64_t(tokens[t]) * C;
    for (int64_t i = 0; i < C; i++) row[i] += dout[t * C + i];
  }
}

}  // namespace s3::cpu
