// The KL penalty of the policy-gradient loss (native/train/losses.h: k3 estimator, β · Σ_t kw_t ·
// KL_t): the fused LM-head loss against the direct formula in f64 and its gradients (∂L/∂h and
// ∂L/∂head) against central finite differences of that formula, over rows that carry the penalty
// alone (coef 0), rows IcePop masks, rows with kl_weight 0 and a row without a target; and
// kl_coef 0 leaves the gradients bit-identical to a loss without the penalty.
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/thread_pool.h"
#include "tests/test_framework.h"
#include "train/losses.h"

namespace {

using s3::train::LossInputs;
using s3::train::LossKind;
using s3::train::LossOptions;

constexpr int64_t T = 8, C = 5, V = 7;
constexpr double kBeta = 0.3;

struct Case {
  std::vector<float> h, head;
  std::vector<int32_t> targets = {3, 0, 6, -1, 2, 5, 1, 4};
  std::vector<float> coef = {1.0f, -0.5f, 0.0f, 1.0f, 0.7f, 0.0f, 1.5f, -1.0f};
  std::vector<float> kl_weight = {0.25f, 0.25f, 0.25f, 0.25f, 0.0f, 0.25f, 0.5f, 0.125f};
  std::vector<float> old, ref;
  std::vector<char> keep;  // the IcePop mask at the unperturbed point (ratios far from the bounds)
};

// log p(targets[t] | h_t) under head, in f64.
double log_prob(const std::vector<double>& h, const std::vector<double>& head, int64_t t, int32_t target) {
  std::vector<double> z(static_cast<size_t>(V), 0.0);
  double max = -INFINITY;
  for (int64_t v = 0; v < V; v++) {
    for (int64_t k = 0; k < C; k++) z[size_t(v)] += h[size_t(t * C + k)] * head[size_t(v * C + k)];
    max = std::max(max, z[size_t(v)]);
  }
  double total = 0.0;
  for (double x : z) total += std::exp(x - max);
  return z[size_t(target)] - max - std::log(total);
}

// The policy-gradient loss (mask held at c.keep) plus β Σ_t kw_t (exp(r_t) − r_t − 1), in f64.
double direct_loss(const Case& c, const std::vector<double>& h, const std::vector<double>& head, double* kl_sum = nullptr) {
  double loss = 0.0;
  if (kl_sum != nullptr) *kl_sum = 0.0;
  for (int64_t t = 0; t < T; t++) {
    const int32_t target = c.targets[size_t(t)];
    if (target < 0) continue;
    const double lp = log_prob(h, head, t, target);
    if (c.coef[size_t(t)] != 0.0f && c.keep[size_t(t)]) loss -= std::exp(lp - double(c.old[size_t(t)])) * double(c.coef[size_t(t)]);
    if (c.kl_weight[size_t(t)] > 0.0f) {
      const double r = double(c.ref[size_t(t)]) - lp;
      const double kl = std::exp(r) - r - 1.0;
      loss += kBeta * double(c.kl_weight[size_t(t)]) * kl;
      if (kl_sum != nullptr) *kl_sum += kl;
    }
  }
  return loss;
}

Case make_case() {
  Case c;
  std::mt19937_64 rng(31);
  std::normal_distribution<float> n(0.0f, 1.0f);
  c.h.resize(size_t(T * C));
  c.head.resize(size_t(V * C));
  for (float& x : c.h) x = n(rng);
  for (float& x : c.head) x = n(rng);
  const std::vector<double> h(c.h.begin(), c.h.end()), head(c.head.begin(), c.head.end());
  const double ratios[] = {1.2, 0.1, 1.0, 1.0, 7.0, 1.0, 0.8, 1.5};    // 0.1 and 7.0: masked
  const double shifts[] = {0.3, -0.8, 1.2, 0.0, 0.5, -0.05, 2.0, -1.5};  // r_t = ref_t − lp_t
  for (int64_t t = 0; t < T; t++) {
    const double lp = c.targets[size_t(t)] >= 0 ? log_prob(h, head, t, c.targets[size_t(t)]) : 0.0;
    c.old.push_back(float(lp - std::log(ratios[t])));
    c.ref.push_back(float(lp + shifts[t]));
    c.keep.push_back(ratios[t] >= 0.2 && ratios[t] <= 5.0);
  }
  return c;
}

struct Result {
  std::vector<float> dh, dhead;
  s3::train::LossStats stats;
};

Result run(const Case& c, float kl_coef, bool with_reference, s3::ThreadPool& pool) {
  LossOptions o;
  o.kind = LossKind::PolicyGradient;
  o.chunk_rows = 3;  // several chunks
  o.kl_coef = kl_coef;
  LossInputs in{c.targets.data(), c.coef.data(), c.old.data()};
  if (with_reference) {
    in.ref_logprobs = c.ref.data();
    in.kl_weight = c.kl_weight.data();
  }
  Result r;
  r.dh.assign(size_t(T * C), 0.0f);
  r.dhead.assign(size_t(V * C), 0.0f);
  r.stats = s3::train::fused_head_loss(r.dh.data(), r.dhead.data(), c.h.data(), c.head.data(), T, C, V, in, o, pool);
  return r;
}

}  // namespace

TEST(kl_penalty_loss_matches_the_k3_formula_and_its_gradient_finite_differences) {
  s3::ThreadPool pool(2);
  const Case c = make_case();
  const Result r = run(c, float(kBeta), true, pool);
  std::vector<double> h(c.h.begin(), c.h.end()), head(c.head.begin(), c.head.end());
  double kl_sum = 0.0;
  const double loss = direct_loss(c, h, head, &kl_sum);
  CHECK_NEAR(r.stats.loss, loss, 1e-5 * (1.0 + std::fabs(loss)));
  CHECK_NEAR(r.stats.kl_sum, kl_sum, 1e-5 * (1.0 + kl_sum));
  CHECK_EQ(r.stats.kl_tokens, int64_t(6));  // kl_weight > 0 with a target: rows 0, 1, 2, 5, 6, 7
  CHECK_EQ(r.stats.tokens, int64_t(5));     // coef ≠ 0 with a target: rows 0, 1, 4, 6, 7
  CHECK_EQ(r.stats.masked, int64_t(2));
  for (std::vector<double>* x : {&h, &head}) {
    const std::vector<float>& grad = x == &h ? r.dh : r.dhead;
    for (size_t i = 0; i < x->size(); i++) {
      const double saved = (*x)[i], step = 1e-5;
      (*x)[i] = saved + step;
      const double up = direct_loss(c, h, head);
      (*x)[i] = saved - step;
      const double down = direct_loss(c, h, head);
      (*x)[i] = saved;
      const double fd = (up - down) / (2.0 * step);
      CHECK_NEAR(double(grad[i]), fd, 1e-4 * (1.0 + std::fabs(fd)));
    }
  }
}

TEST(kl_penalty_with_coefficient_zero_leaves_the_gradients_bit_identical) {
  s3::ThreadPool pool(2);
  const Case c = make_case();
  const Result plain = run(c, 0.0f, false, pool), off = run(c, 0.0f, true, pool);
  CHECK(std::memcmp(plain.dh.data(), off.dh.data(), plain.dh.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(plain.dhead.data(), off.dhead.data(), plain.dhead.size() * sizeof(float)) == 0);
  CHECK_EQ(off.stats.loss, plain.stats.loss);
  CHECK_EQ(off.stats.kl_tokens, int64_t(0));
  // On, the penalty changes them; it needs its inputs.
  const Result on = run(c, float(kBeta), true, pool);
  CHECK(std::memcmp(plain.dh.data(), on.dh.data(), plain.dh.size() * sizeof(float)) != 0);
  CHECK_THROWS(std::invalid_argument, run(c, float(kBeta), false, pool));
}
