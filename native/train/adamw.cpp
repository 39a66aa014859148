// adamw.cpp: the implementation of train/adamw.h (see the header for the contract and layouts).
#include "train/adamw.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/dtype.h"
#include "core/philox.h"

namespace s3::train {

namespace {

// Philox stream of the bf16 moments' stochastic rounding (apart from the samplers' streams).
constexpr uint32_t kRoundingStream = 0x41444D57u;  // "ADMW"

// The f32 arithmetic of one parameter's update, shared by both moment dtypes.
struct UpdateCoefficients {
  float b1, b2, c1, c2, lr, eps, wd, scale;
};

inline void update_parameter(const UpdateCoefficients& k, float grad, float& m, float& v, float& param) {
  const float g = grad * k.scale;
  m = k.b1 * m + (1.0f - k.b1) * g;
  v = k.b2 * v + (1.0f - k.b2) * g * g;
  const float mhat = m / k.c1, vhat = v / k.c2;
  param -= k.lr * (mhat / (std::sqrt(vhat) + k.eps) + k.wd * param);
}

}  // namespace

const char* optimizer_state_dtype_name(OptimizerStateDtype dtype) {
  return dtype == OptimizerStateDtype::Bf16 ? "bf16" : "f32";
}

std::optional<OptimizerStateDtype> parse_optimizer_state_dtype(std::string_view name) {
  if (name == "f32") return OptimizerStateDtype::F32;
  if (name == "bf16") return OptimizerStateDtype::Bf16;
  return std::nullopt;
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
  // Global norm: fixed blocks summed in order, so the result does not depend on the pool.
  constexpr size_t kBlock = 1 << 16;  // a multiple of 4: a Philox block's 4 parameters share a block
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
  const UpdateCoefficients k{float(o.beta1),
                             float(o.beta2),
                             float(1.0 - std::pow(o.beta1, double(state.step))),
                             float(1.0 - std::pow(o.beta2, double(state.step))),
                             float(result.lr),
                             float(o.eps),
                             float(o.weight_decay),
                             float(clip)};
  if (!bf16) {
    float* m = state.m.data();
    float* v = state.v.data();
    pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin * kBlock; i < std::min(n, end * kBlock); i++) update_parameter(k, grads[i], m[i], v[i], params[i]);
    });
    return result;
  }
  uint16_t* m = state.m_bf16.data();
  uint16_t* v = state.v_bf16.data();
  const uint32_t step = uint32_t(state.step);
  pool.parallel_for(blocks, [&](size_t begin, size_t end, size_t) {
    Philox4x32 random{};
    for (size_t i = begin * kBlock; i < std::min(n, end * kBlock); i++) {
      if (i % 4 == 0) random = philox_block(o.rounding_seed, i / 4, step, kRoundingStream);
      const uint32_t bits = random.word[i % 4];
      float mi = bf16_to_f32(m[i]), vi = bf16_to_f32(v[i]);
      update_parameter(k, grads[i], mi, vi, params[i]);
      m[i] = f32_to_bf16_stochastic(mi, bits);
      v[i] = f32_to_bf16_stochastic(vi, bits >> 16);
    }
  });
  return result;
}

}  // namespace s3::train
