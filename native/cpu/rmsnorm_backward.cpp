// rmsnorm_backward.cpp: the implementation of cpu/rmsnorm_backward.h (see the header for the contract and layouts).
// A row's two sums (Σ x², Σ w·dy·x) run in double as core/ops/interleaved_sums.h's eight partial
// sums: the same bits at every SIMD level, since nothing is fused or reassociated (fp-contract off
// below).
#include "cpu/rmsnorm_backward.h"

#include <vector>

#include "core/ops/interleaved_sums.h"
#include "core/ops/rmsnorm.h"

#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace s3::cpu {

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps, const float* residual) {
  std::vector<double> dw(size_t(C), 0.0);
  for (int64_t n = 0; n < N; n++) {
    const float* x = inp + n * C;
    const float* dy = dout + n * C;
    float* dx = dinp + n * C;
    double squares[ops::kInterleavedSums] = {}, dots[ops::kInterleavedSums] = {};
    const auto add_terms = [&](int64_t i0, int lanes) {
      for (int j = 0; j < lanes; j++) {
        const float xi = x[i0 + j];
        squares[j] += double(xi) * double(xi);
        dots[j] += ops::rmsnorm_backward_dot_term(weight[i0 + j], dy[i0 + j], xi);
      }
    };
    int64_t i0 = 0;
    for (; i0 + ops::kInterleavedSums <= C; i0 += ops::kInterleavedSums) add_terms(i0, ops::kInterleavedSums);  // a constant count: vectorized
    if (i0 < C) add_terms(i0, int(C - i0));
    const double rstd = ops::rmsnorm_backward_rstd(ops::combine_interleaved_sums(squares), C, eps);
    const double coef = ops::rmsnorm_backward_coef(rstd, ops::combine_interleaved_sums(dots), C);
    for (int64_t i = 0; i < C; i++) {
      dw[size_t(i)] += ops::rmsnorm_backward_dweight_term(dy[i], x[i], rstd);
      const float g = ops::rmsnorm_backward_dx(rstd, coef, weight[i], dy[i], x[i]);
      dx[i] = residual != nullptr ? residual[n * C + i] + g : g;
    }
  }
  for (int64_t i = 0; i < C; i++) dweight[i] += float(dw[size_t(i)]);
}

}  // namespace s3::cpu

#pragma GCC pop_options
