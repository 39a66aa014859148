// adamw.cpp: the implementation of train/adamw.h (see the header for the contract and layouts).
#include "train/adamw.h"

#include <algorithm>
#include <cmath>

namespace s3::train {

AdamWStepResult adamw_step(float* params, const float* grads, size_t n, AdamWState& state, const AdamWOptions& o,
                           ThreadPool& pool) {
  state.m.resize(n, 0.0f);
  state.v.resize(n, 0.0f);
  // Global norm: fixed blocks summed in order, so the result does not depend on the pool.
  constexpr size_t kBlock = 1 << 16;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0.0);
  pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
    for (size_t b = begin; b < end; b++) {
      double s = 0.0;
      for (size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); i++) s += double(grads[i]) * double(grads[i]);
      partial[b] = s;
    }
  });
  double total = 0.0;
  for (double s : partial) total += s;
  AdamWStepResult result;
  result.grad_norm = std::sqrt(total);
  const double clip = (o.max_grad_norm > 0.0 && result.grad_norm > o.max_grad_norm) ? o.max_grad_norm / result.grad_norm : 1.0;
  state.step += 1;
  result.step = state.step;
  result.lr = o.warmup_steps > 0 ? o.lr * std::min(1.0, double(state.step) / double(o.warmup_steps)) : o.lr;
  const float b1 = float(o.beta1), b2 = float(o.beta2);
  const float c1 = float(1.0 - std::pow(o.beta1, double(state.step)));
  const float c2 = float(1.0 - std::pow(o.beta2, double(state.step)));
  const float lr = float(result.lr), eps = float(o.eps), wd = float(o.weight_decay), scale = float(clip);
  float* m = state.m.data();
  float* v = state.v.data();
  pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin * kBlock; i < std::min(n, end * kBlock); i++) {
      const float g = grads[i] * scale;
      m[i] = b1 * m[i] + (1.0f - b1) * g;
      v[i] = b2 * v[i] + (1.0f - b2) * g * g;
      const float mhat = m[i] / c1, vhat = v[i] / c2;
      params[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + wd * params[i]);
    }
  });
  return result;
}

}  // namespace s3::train
