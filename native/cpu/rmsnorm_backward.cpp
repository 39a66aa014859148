// rmsnorm_backward.cpp: the implementation of cpu/rmsnorm_backward.h (see the header for the contract and layouts).
#include "cpu/rmsnorm_backward.h"

#include <vector>

#include "core/ops/rmsnorm.h"

namespace s3::cpu {

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps) {
  std::vector<double> dw(size_t(C), 0.0);
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    const float* dy = dout + n * C;
    float* dx = dinp + n * C;
    double sum_squares = 0.0;
    for (int64_t i = 0; i < C; i++) sum_squares += double(x[i]) * double(x[i]);
    const double rstd = ops::rmsnorm_backward_rstd(sum_squares, C, eps);
    double dot = 0.0;
    for (int64_t i = 0; i < C; i++) {
      dot += ops::rmsnorm_backward_dot_term(weight[i], dy[i], x[i]);
      dw[size_t(i)] += ops::rmsnorm_backward_dweight_term(dy[i], x[i], rstd);
    }
    const double coef = ops::rmsnorm_backward_coef(rstd, dot, C);
    for (int64_t i = 0; i < C; i++) dx[i] = ops::rmsnorm_backward_dx(rstd, coef, weight[i], dy[i], x[i]);
  }
  for (int64_t i = 0; i < C; i++) dweight[i] += float(dw[size_t(i)]);
}

}  // namespace s3::cpu
