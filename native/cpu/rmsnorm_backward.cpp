// rmsnorm_backward.cpp: the implementation of cpu/rmsnorm_backward.h (see the header for the contract and layouts).
#include "cpu/rmsnorm_backward.h"

#include <cmath>
#include <vector>

namespace s3::cpu {

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps) {
  std::vector<double> dw(size_t(C), 0.0);
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    const float* dy = dout + n * C;
    float* dx = dinp + n * C;
    double mean_square = 0.0;
    for (int64_t i = 0; i < C; i++) mean_square += double(x[i]) * double(x[i]);
    mean_square /= double(C);
    const double rstd = 1.0 / std::sqrt(mean_square + double(eps));
    double dot = 0.0;  // Σ (w·dy)·x
    for (int64_t i = 0; i < C; i++) {
      dot += double(weight[i]) * double(dy[i]) * double(x[i]);
      dw[size_t(i)] += double(dy[i]) * double(x[i]) * rstd;
    }
    const double coef = rstd * rstd * rstd * dot / double(C);
    for (int64_t i = 0; i < C; i++) dx[i] = float(rstd * double(weight[i]) * double(dy[i]) - coef * double(x[i]));
  }
  for (int64_t i = 0; i < C; i++) dweight[i] += float(dw[size_t(i)]);
}

}  // namespace s3::cpu
