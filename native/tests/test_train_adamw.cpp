// test_train_adamw.cpp: AdamW's optional bf16 moments (train/adamw.h). Stochastic rounding to bf16
// is unbiased and exact on representable values; bf16 moments fed the same gradients as f32 ones
// track them within bf16 noise where round-to-nearest drifts off; on a quadratic the bf16 run
// converges like the f32 one; results do not depend on the pool size; and the f32 default is
// bit for bit the update it always was.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/philox.h"
#include "tests/test_framework.h"
#include "train/adamw.h"

namespace {

using s3::train::AdamWOptions;
using s3::train::AdamWState;
using s3::train::OptimizerStateDtype;

AdamWOptions bf16_options(double lr) {
  AdamWOptions o;
  o.lr = lr;
  o.max_grad_norm = 0.0;
  o.state_dtype = OptimizerStateDtype::Bf16;
  return o;
}

// Gradients of step `step` that do not depend on the parameters: N(0, scale_i²) with a
// per-parameter scale spread over four decades.
std::vector<float> random_gradients(size_t n, int step) {
  std::mt19937 rng(uint32_t(1000 + step));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(n);
  for (size_t i = 0; i < n; i++) g[i] = normal(rng) * std::pow(10.0f, -4.0f + 4.0f * float(i) / float(n));
  return g;
}

}  // namespace

TEST(bf16_stochastic_rounding_is_exact_on_bf16_values_and_unbiased) {
  for (float x : {0.0f, -0.0f, 1.0f, -3.5f, 1.0f / 1024.0f, INFINITY, -INFINITY}) {
    for (uint32_t r : {0u, 0x1234u, 0xFFFFu}) CHECK_EQ(s3::f32_to_bf16_stochastic(x, r), s3::f32_to_bf16(x));
  }
  CHECK(std::isnan(s3::bf16_to_f32(s3::f32_to_bf16_stochastic(NAN, 0xFFFFu))));
  const float x = 1.0f + 0.3f / 128.0f;  // 0.3 of the way from 1 to the next bf16 value (1 + 2^-7)
  CHECK_EQ(s3::bf16_to_f32(s3::f32_to_bf16_stochastic(x, 0)), 1.0f);
  CHECK_EQ(s3::bf16_to_f32(s3::f32_to_bf16_stochastic(x, 0xFFFFu)), 1.0f + 1.0f / 128.0f);
  CHECK_EQ(s3::bf16_to_f32(s3::f32_to_bf16_stochastic(-x, 0xFFFFu)), -(1.0f + 1.0f / 128.0f));
  // The mean of many roundings is the value: P(up) = 0.3 exactly on 2^16 equally likely words.
  double sum = 0.0;
  const int draws = 1 << 18;
  for (int k = 0; k < draws; k++) {
    sum += s3::bf16_to_f32(s3::f32_to_bf16_stochastic(x, s3::philox_block(7, uint64_t(k), 0, 0).word[0]));
  }
  // Standard error of the mean: 2^-7 · √(0.3 · 0.7) / √draws ≈ 7e-6.
  CHECK_NEAR(sum / draws, double(x), 4e-5);
}

TEST(adamw_bf16_moments_track_f32_ones_where_round_to_nearest_drifts) {
  const size_t n = 4096;
  const int steps = 2000;
  s3::ThreadPool pool(2);
  AdamWOptions f32 = bf16_options(1e-3);
  f32.state_dtype = OptimizerStateDtype::F32;
  const AdamWOptions bf16 = bf16_options(1e-3);
  std::vector<float> p32(n, 0.0f), p16(n, 0.0f);
  AdamWState s32, s16;
  std::vector<float> v_nearest(n, 0.0f);  // v kept in bf16 with round-to-nearest, for contrast
  for (int t = 1; t <= steps; t++) {
    const std::vector<float> g = random_gradients(n, t);
    s3::train::adamw_step(p32.data(), g.data(), n, s32, f32, pool);
    s3::train::adamw_step(p16.data(), g.data(), n, s16, bf16, pool);
    for (size_t i = 0; i < n; i++) v_nearest[i] = s3::bf16_to_f32(s3::f32_to_bf16(0.999f * v_nearest[i] + 0.001f * g[i] * g[i]));
  }
  CHECK(s16.m.empty() && s16.v.empty() && s32.m_bf16.empty() && s32.v_bf16.empty());
  double v_error = 0.0, v_error_sq = 0.0, nearest_error = 0.0, m_error_sq = 0.0, m_scale_sq = 0.0, p_gap = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double v = s32.v[i], rel = (s3::bf16_to_f32(s16.v_bf16[i]) - v) / v;
    v_error += rel;
    v_error_sq += rel * rel;
    nearest_error += (v_nearest[i] - v) / v;
    m_error_sq += std::pow(s3::bf16_to_f32(s16.m_bf16[i]) - s32.m[i], 2.0);
    m_scale_sq += v;
    p_gap = std::max(p_gap, double(std::fabs(p16[i] - p32[i])));
  }
  // v: unbiased (mean relative error ≈ 0), with rounding noise that accumulates over the ~1/(1 − β2)
  // steps v remembers: rms ≈ ulp · √(500 / 6), about 4% (a numpy model of the same run gives
  // mean 0.2%, rms 3.9%). Round-to-nearest moves v only by steps above half an ulp, up on a large
  // g² and never down, and ends about 20% high here.
  CHECK_NEAR(v_error / double(n), 0.0, 0.01);
  CHECK(std::sqrt(v_error_sq / double(n)) < 0.08);
  CHECK(std::fabs(nearest_error / double(n)) > 0.1);
  // m: its error is small against the gradient scale √v.
  CHECK(std::sqrt(m_error_sq / m_scale_sq) < 0.02);
  // Each parameter moved by up to lr per step (2 in all); the bf16 run ends within 0.01 of the f32 one
  // (the numpy model: 0.004).
  CHECK(p_gap < 0.01);
}

TEST(adamw_bf16_moments_minimize_a_quadratic_like_f32_ones) {
  const size_t n = 1024;
  s3::ThreadPool pool(2);
  std::vector<float> target(n), curvature(n);
  for (size_t i = 0; i < n; i++) {
    target[i] = std::sin(float(i));
    curvature[i] = 0.1f + float(i % 7);
  }
  auto run = [&](OptimizerStateDtype dtype) {
    AdamWOptions o = bf16_options(1e-2);
    o.state_dtype = dtype;
    std::vector<float> p(n, 0.0f), g(n);
    AdamWState state;
    for (int t = 0; t < 1500; t++) {
      for (size_t i = 0; i < n; i++) g[i] = curvature[i] * (p[i] - target[i]);
      s3::train::adamw_step(p.data(), g.data(), n, state, o, pool);
    }
    double loss = 0.0;
    for (size_t i = 0; i < n; i++) loss += 0.5 * curvature[i] * std::pow(p[i] - target[i], 2.0);
    return std::make_pair(loss, p);
  };
  const auto [loss32, p32] = run(OptimizerStateDtype::F32);
  const auto [loss16, p16] = run(OptimizerStateDtype::Bf16);
  double initial = 0.0, gap = 0.0;
  for (size_t i = 0; i < n; i++) {
    initial += 0.5 * curvature[i] * target[i] * target[i];
    gap = std::max(gap, double(std::fabs(p16[i] - p32[i])));
  }
  CHECK(loss32 < 1e-3 * initial);
  CHECK(loss16 < 1e-3 * initial);
  CHECK(gap < 0.02);
}

TEST(adamw_bf16_moments_do_not_depend_on_the_pool_size) {
  const size_t n = 3 * 65536 + 13;  // several pool blocks, not a multiple of 4
  std::vector<std::vector<float>> params;
  std::vector<AdamWState> states;
  for (size_t threads : {1, 2, 3}) {
    s3::ThreadPool pool(threads);
    std::vector<float> p(n, 0.5f);
    AdamWState state;
    AdamWOptions o = bf16_options(1e-3);
    o.rounding_seed = 42;
    for (int t = 1; t <= 3; t++) s3::train::adamw_step(p.data(), random_gradients(n, t).data(), n, state, o, pool);
    params.push_back(p);
    states.push_back(state);
  }
  for (size_t k = 1; k < params.size(); k++) {
    CHECK(std::memcmp(params[k].data(), params[0].data(), n * sizeof(float)) == 0);
    CHECK(states[k].m_bf16 == states[0].m_bf16);
    CHECK(states[k].v_bf16 == states[0].v_bf16);
  }
  // Another seed rounds differently.
  s3::ThreadPool pool(2);
  std::vector<float> p(n, 0.5f);
  AdamWState state;
  for (int t = 1; t <= 3; t++) s3::train::adamw_step(p.data(), random_gradients(n, t).data(), n, state, bf16_options(1e-3), pool);
  CHECK(state.v_bf16 != states[0].v_bf16);
}

TEST(adamw_f32_default_is_the_plain_f32_update_bit_for_bit) {
  const size_t n = 70001;
  s3::ThreadPool pool(3);
  AdamWOptions o;
  o.lr = 1e-3;
  o.weight_decay = 0.01;
  o.warmup_steps = 2;
  o.max_grad_norm = 1.0;
  CHECK(o.state_dtype == OptimizerStateDtype::F32);
  std::vector<float> p(n, 0.25f), ref = p, m(n, 0.0f), v(n, 0.0f);
  AdamWState state;
  for (int t = 1; t <= 3; t++) {
    const std::vector<float> g = random_gradients(n, t);
    const auto r = s3::train::adamw_step(p.data(), g.data(), n, state, o, pool);
    long double squares = 0.0L;  // the global norm against a long-double sum in plain order
    for (float x : g) squares += (long double)x * (long double)x;
    CHECK(std::fabs(r.grad_norm - double(std::sqrt(squares))) <= 1e-13 * r.grad_norm);
    const float clip = r.grad_norm > 1.0 ? float(1.0 / r.grad_norm) : 1.0f;
    const float c1 = float(1.0 - std::pow(0.9, double(t))), c2 = float(1.0 - std::pow(0.999, double(t)));
    const float b1 = 0.9f, b2 = 0.999f, lr = float(r.lr), eps = 1e-8f, wd = 0.01f;
    for (size_t i = 0; i < n; i++) {
      const float gi = g[i] * clip;
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      const float mhat = m[i] / c1, vhat = v[i] / c2;
      ref[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + wd * ref[i]);
    }
  }
  CHECK(std::memcmp(p.data(), ref.data(), n * sizeof(float)) == 0);
  CHECK(state.m == m);
  CHECK(state.v == v);
  CHECK(state.m_bf16.empty() && state.v_bf16.empty());
}

TEST(adamw_refuses_a_state_of_the_other_dtype) {
  s3::ThreadPool pool(1);
  std::vector<float> p(8, 0.0f), g(8, 1.0f);
  AdamWState state;
  s3::train::adamw_step(p.data(), g.data(), p.size(), state, AdamWOptions{}, pool);
  CHECK_THROWS(std::invalid_argument, s3::train::adamw_step(p.data(), g.data(), p.size(), state, bf16_options(1e-3), pool));
  CHECK(s3::train::parse_optimizer_state_dtype("bf16") == OptimizerStateDtype::Bf16);
  CHECK(s3::train::parse_optimizer_state_dtype("f32") == OptimizerStateDtype::F32);
  CHECK(!s3::train::parse_optimizer_state_dtype("fp16").has_value());
}
