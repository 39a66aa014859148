// RMSNorm; see rmsnorm.h. The row's arithmetic after its sum of squares is core/ops/rmsnorm.h,
// which cuda/rmsnorm shares (normalize first, then weight: the Hugging Face order).
#include "cpu/rmsnorm.h"

#include "core/ops/rmsnorm.h"

namespace s3::cpu {

void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps) {
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    float* y = out + n * C;
    double sum_squares = 0.0;
    for (int64_t c = 0; c < C; c++) sum_squares += double(x[c]) * double(x[c]);
    const float inv_rms = ops::rmsnorm_inv_rms(sum_squares, C, eps);
    for (int64_t c = 0; c < C; c++) y[c] = ops::rmsnorm_apply(x[c], inv_rms, weight[c]);
  }
}

}  // namespace s3::cpu
