// adamw: AdamW on f32 master weights with global gradient-norm clipping and a constant learning
// rate with optional linear warm-up (SPEC §7 defaults: β1 0.9, β2 0.999, ε 1e-8, weight decay 0,
// clip 1.0). Decoupled weight decay: p −= lr·(m̂/(√v̂ + ε) + wd·p).
//
// The moments m and v are stored in f32 (the default) or, opt-in, in bf16 (half their memory:
// 4 instead of 8 bytes per parameter). Either way every update is computed in f32; bf16 moments
// are read, updated in f32, used for this step's parameter update, and stored back with
// stochastic rounding (core/dtype.h: f32_to_bf16_stochastic). Round-to-nearest would stall them:
// with β2 = 0.999, v's change per step, (1 − β2)·(g² − v), is about 1e-3 of v, below half a bf16
// ulp (2^-9 to 2^-8 relative), so a stored v would move only on an unusually large g², and then
// only upwards (on random gradients it ends ~20% high); stochastic rounding keeps the expected
// stored value equal to the f32 one, so the moments still average correctly (at the price of
// noise: about 4% rms relative error in v at β2 = 0.999, test_train_adamw.cpp). The random
// bits are a pure function of (rounding_seed, step, parameter index) (Philox, core/philox.h: one
// block per 4 parameters, counter = index / 4 and step, 16 bits for m and 16 for v), so the result
// is the same for any thread pool and a resumed run repeats an uninterrupted one bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ops/adamw.h"
#include "core/thread_pool.h"

namespace s3::train {

enum class OptimizerStateDtype : uint8_t { F32, Bf16 };

// "f32" or "bf16" (the names of the trainer's optimizerStateDtype option and of trainer_state.json).
const char* optimizer_state_dtype_name(OptimizerStateDtype dtype);
std::optional<OptimizerStateDtype> parse_optimizer_state_dtype(std::string_view name);

struct AdamWOptions {
  double lr = 1e-5;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double max_grad_norm = 1.0;  // ≤ 0: no clipping
  int64_t warmup_steps = 0;    // lr ramps linearly over the first steps: lr·min(1, step/warmup)
  OptimizerStateDtype state_dtype = OptimizerStateDtype::F32;
  uint64_t rounding_seed = 0;  // bf16 moments: the key of the stochastic rounding's random bits
};

// The moments live in the vectors of options.state_dtype (one entry per parameter); the others
// stay empty.
struct AdamWState {
  std::vector<float> m, v;                // f32 first and second moments
  std::vector<uint16_t> m_bf16, v_bf16;   // bf16 (bits) first and second moments
  int64_t step = 0;                       // updates taken
};

struct AdamWStepResult {
  double grad_norm = 0.0;  // before clipping
  double lr = 0.0;         // the rate this update used
  int64_t step = 0;        // the update's number, from 1
};

// What update number `step` (from 1) does given the gradients' global norm: its rate (warm-up), the
// clip scale and the f32 constants every parameter's update uses (core/ops/adamw.h). The CPU step
// below and the device's (cuda/adamw.h) both start here.
struct AdamWUpdate {
  ops::AdamWCoefficients coefficients{};
  AdamWStepResult result;
};
AdamWUpdate adamw_plan_update(const AdamWOptions& options, int64_t step, double grad_norm);

// One update of params [n] from grads [n] (left untouched). Deterministic for any pool.
// std::invalid_argument when the state holds moments of the other dtype than options.state_dtype.
AdamWStepResult adamw_step(float* params, const float* grads, size_t n, AdamWState& state, const AdamWOptions& options,
                           ThreadPool& pool);

}  // namespace s3::train
