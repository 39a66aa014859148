// rmsnorm_backward: y = w ⊙ x / sqrt(mean(x²) + eps) over rows of C values (also per-head q/k
// norms, with N = T·heads and C = head_dim).
#pragma once

#include <cstdint>

namespace s3::cpu {

// dinp[N×C] overwritten; dweight[C] accumulated (+=).
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps);

}  // namespace s3::cpu
