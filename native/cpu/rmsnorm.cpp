// RMSNorm; see rmsnorm.h. The row's arithmetic after its sum of squares is core/ops/rmsnorm.h,
// which cuda/rmsnorm shares (normalize first, then weight: the Hugging Face order).
#include "cpu/rmsnorm.h"

#include "core/ops/rmsnorm.h"

namespace s3::cpu {
namespace {

// Σ x² in double over C values: 8 interleaved partial sums (element c into partial c mod 8, which
// the compiler keeps in vector registers), added by a fixed tree, then the last C mod 8 in order.
// Each square is exact in double and the sum is rounded to f32 afterwards, so this order and a
// sequential one give the same f32 row but in cases of probability ~1e-9.
double sum_of_squares(const float* x, int64_t C) {
  double partial[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  int64_t c = 0;
  for (; c + 8 <= C; c += 8) {
    for (int j = 0; j < 8; j++) partial[j] += double(x[c + j]) * double(x[c + j]);
  }
  double sum = ((partial[0] + partial[4]) + (partial[2] + partial[6])) + ((partial[1] + partial[5]) + (partial[3] + partial[7]));
  for (; c < C; c++) sum += double(x[c]) * double(x[c]);
  return sum;
}

}  // namespace

void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps) {
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    float* y = out + n * C;
    const float inv_rms = ops::rmsnorm_inv_rms(sum_of_squares(x, C), C, eps);
    for (int64_t c = 0; c < C; c++) y[c] = ops::rmsnorm_apply(x[c], inv_rms, weight[c]);
  }
}

}  // namespace s3::cpu
