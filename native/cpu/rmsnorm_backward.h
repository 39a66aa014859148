// rmsnorm_backward: y = w ⊙ x / sqrt(mean(x²) + eps) over rows of C values (also per-head q/k
// norms, with N = T·heads and C = head_dim).
#pragma once

#include <cstdint>

namespace s3::cpu {

// dinp[N×C] overwritten (it may be dout); dweight[C] accumulated (+=). With `residual` [N×C] (it
// may be dinp), dinp = residual + the gradient, each element one f32 add: the residual stream's
// gradient in the same pass, the bits of adding the two afterwards.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps, const float* residual = nullptr);

}  // namespace s3::cpu
