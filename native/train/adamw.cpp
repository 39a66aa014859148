// adamw.cpp: the implementation of train/adamw.h (see the header for the contract and layouts).
#include "train/adamw.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/ops/adamw.h"
#include "core/ops/interleaved_sums.h"
#include "cpu/adamw_update.h"

namespace s3::train {

const char* optimizer_state_dtype_name(OptimizerStateDtype dtype) {
  return dtype == OptimizerStateDtype::Bf16 ? "bf16" : "f32";
}

std::optional<OptimizerStateDtype> parse_optimizer_state_dtype(std::string_view name) {
  if (name == "f32") return OptimizerStateDtype::F32;
  if (name == "bf16") return OptimizerStateDtype::Bf16;
  return std::nullopt;
}

AdamWUpdate adamw_plan_update(const AdamWOptions& o, int64_t step, double grad_norm) {
  AdamWUpdate update;
  update.result.grad_norm = grad_norm;
  update.result.step = step;
  update.result.lr = o.warmup_steps > 0 ? o.lr * std::min(1.0, double(step) / double(o.warmup_steps)) : o.lr;
  const double clip = (o.max_grad_norm > 0.0 && grad_norm > o.max_grad_norm) ? o.max_grad_norm / grad_norm : 1.0;
  update.coefficients = ops::AdamWCoefficients{float(o.beta1),
                                               float(o.beta2),
                                               float(1.0 - std::pow(o.beta1, double(step))),
                                               float(1.0 - std::pow(o.beta2, double(step))),
                                               float(update.result.lr),
                                               float(o.eps),
                                               float(o.weight_decay),
                                               float(clip)};
  return update;
}

AdamWStepResult adamw_step(float* params, const float* grads, size_t n, AdamWState& state, const AdamWOptions& o,
                           ThreadPool& pool) {
  const bool bf16 = o.state_dtype == OptimizerStateDtype::Bf16;
  if (bf16 ? !(state.m.empty() && state.v.empty()) : !(state.m_bf16.empty() && state.v_bf16.empty())) {
    throw std::invalid_argument(std::string("adamw_step: the state holds moments of another dtype than ") +
                                optimizer_state_dtype_name(o.state_dtype));
  }
  if (bf16) {
    state.m_bf16.resize(n, 0);
    state.v_bf16.resize(n, 0);
  } else {
    state.m.resize(n, 0.0f);
    state.v.resize(n, 0.0f);
  }
  // Global norm: fixed blocks, each an interleaved sum, summed in order, so the result does not
  // depend on the pool.
  constexpr size_t kBlock = 1 << 16;  // a multiple of 4: a Philox block's 4 parameters share a block
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0.0);
  pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
    for (size_t b = begin; b < end; b++) {
      partial[b] = ops::interleaved_sum_of_squares(grads + b * kBlock, std::min(n, (b + 1) * kBlock) - b * kBlock);
    }
  });
  double total = 0.0;
  for (double s : partial) total += s;
  state.step += 1;
  const AdamWUpdate update = adamw_plan_update(o, state.step, std::sqrt(total));
  const AdamWStepResult& result = update.result;
  const ops::AdamWCoefficients& k = update.coefficients;
  if (!bf16) {
    float* m = state.m.data();
    float* v = state.v.data();
    const cpu::AdamwUpdateKernels& kernels = cpu::adamw_update_kernels();  // ops::adamw_update on vectors
    pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
      const size_t first = begin * kBlock, last = std::min(n, end * kBlock);
      kernels.update(k, grads + first, m + first, v + first, params + first, int64_t(last - first));
    });
    return result;
  }
  uint16_t* m = state.m_bf16.data();
  uint16_t* v = state.v_bf16.data();
  const uint32_t step = uint32_t(state.step);
  pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
    Philox4x32 random{};
    for (size_t i = begin * kBlock; i < std::min(n, end * kBlock); i++) {
      if (i % 4 == 0) random = philox_block(o.rounding_seed, i / 4, step, ops::kAdamWRoundingStream);
      ops::adamw_update_bf16(k, grads[i], m[i], v[i], params[i], random.word[i % 4]);
    }
  });
  return result;
}

}  // namespace s3::train
