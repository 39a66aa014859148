// adamw: AdamW on f32 master weights with f32 moments, global gradient-norm clipping and a
// constant learning rate with optional linear warm-up (SPEC §7 defaults: β1 0.9, β2 0.999,
// ε 1e-8, weight decay 0, clip 1.0). Decoupled weight decay: p −= lr·(m̂/(√v̂ + ε) + wd·p).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace s3::train {

struct AdamWOptions {
  double lr = 1e-5;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double max_grad_norm = 1.0;  // ≤ 0: no clipping
  int64_t warmup_steps = 0;    // lr ramps linearly over the first steps: lr·min(1, step/warmup)
};

struct AdamWState {
  std::vector<float> m, v;  // first and second moments, one per parameter
  int64_t step = 0;         // updates taken
};

struct AdamWStepResult {
  double grad_norm = 0.0;  // before clipping
  double lr = 0.0;         // the rate this update used
  int64_t step = 0;        // the update's number, from 1
};

// One update of params [n] from grads [n] (left untouched). Deterministic for any pool.
AdamWStepResult adamw_step(float* params, const float* grads, size_t n, AdamWState& state, const AdamWOptions& options,
                           ThreadPool& pool);

}  // namespace s3::train
