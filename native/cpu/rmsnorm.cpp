// RMSNorm; see rmsnorm.h. Normalizing first and multiplying by the weight second follows the
// Hugging Face order (the weight multiplies the value cast back from f32).
#include "cpu/rmsnorm.h"

#include <cmath>

namespace s3::cpu {

void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps) {
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    float* y = out + n * C;
    double sum_squares = 0.0;
    for (int64_t c = 0; c < C; c++) sum_squares += double(x[c]) * double(x[c]);
    const float variance = float(sum_squares / double(C));
    const float inv_rms = 1.0f / std::sqrt(variance + eps);
    for (int64_t c = 0; c < C; c++) y[c] = weight[c] * (x[c] * inv_rms);
  }
}

}  // namespace s3::cpu
