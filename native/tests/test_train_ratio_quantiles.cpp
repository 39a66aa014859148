// The importance-ratio quantiles of the policy-gradient loss (native/train/losses.h:
// LossStats::ratios and ratio_quantiles): ratio_quantiles against hand-computed type-7 (linear
// interpolation between closest ranks) values, the empty and one-value cases and NaN; and over the
// fused LM-head loss with hand-set old log-probs, the collected ratios are exactly the rows with a
// target and coef ≠ 0 (IcePop-masked rows included, coef-0 rows and rows without a target not),
// their quantiles equal a direct computation (nth_element) on the ratios computed in f64, and
// min ≤ p01 ≤ p10 ≤ p50 ≤ p90 ≤ p99 ≤ max. The SFT loss collects none.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "tests/test_framework.h"
#include "train/losses.h"

namespace {

using s3::train::LossInputs;
using s3::train::LossKind;
using s3::train::LossOptions;
using s3::train::RatioQuantiles;

// Type-7 quantile by selection, independent of ratio_quantiles' sort.
double direct_quantile(std::vector<double> x, double q) {
  const double h = double(x.size() - 1) * q;
  const size_t lo = size_t(std::floor(h));
  std::nth_element(x.begin(), x.begin() + std::ptrdiff_t(lo), x.end());
  const double a = x[lo];
  if (lo + 1 >= x.size()) return a;
  const double b = *std::min_element(x.begin() + std::ptrdiff_t(lo + 1), x.end());
  return a + (h - double(lo)) * (b - a);
}

void check_ordered(const RatioQuantiles& q) {
  CHECK(q.min <= q.p01);
  CHECK(q.p01 <= q.p10);
  CHECK(q.p10 <= q.p50);
  CHECK(q.p50 <= q.p90);
  CHECK(q.p90 <= q.p99);
  CHECK(q.p99 <= q.max);
}

void check_direct(const RatioQuantiles& q, const std::vector<double>& x, double tol) {
  CHECK_NEAR(q.min, *std::min_element(x.begin(), x.end()), tol);
  CHECK_NEAR(q.p01, direct_quantile(x, 0.01), tol);
  CHECK_NEAR(q.p10, direct_quantile(x, 0.1), tol);
  CHECK_NEAR(q.p50, direct_quantile(x, 0.5), tol);
  CHECK_NEAR(q.p90, direct_quantile(x, 0.9), tol);
  CHECK_NEAR(q.p99, direct_quantile(x, 0.99), tol);
  CHECK_NEAR(q.max, *std::max_element(x.begin(), x.end()), tol);
}

}  // namespace

TEST(ratio_quantiles_interpolate_between_closest_ranks) {
  // Sorted 1..5 (given shuffled): h = 4q.
  const RatioQuantiles q = s3::train::ratio_quantiles({4.0, 1.0, 5.0, 3.0, 2.0});
  CHECK_EQ(q.min, 1.0);
  CHECK_NEAR(q.p01, 1.04, 1e-12);
  CHECK_NEAR(q.p10, 1.4, 1e-12);
  CHECK_EQ(q.p50, 3.0);
  CHECK_NEAR(q.p90, 4.6, 1e-12);
  CHECK_NEAR(q.p99, 4.96, 1e-12);
  CHECK_EQ(q.max, 5.0);
  // Even count: the median is the mean of the middle two.
  CHECK_EQ(s3::train::ratio_quantiles({2.0, 1.0, 4.0, 3.0}).p50, 2.5);
  // No values: every field 0; one value: every field that value.
  const RatioQuantiles none = s3::train::ratio_quantiles({});
  for (double v : {none.min, none.p01, none.p10, none.p50, none.p90, none.p99, none.max}) CHECK_EQ(v, 0.0);
  const RatioQuantiles one = s3::train::ratio_quantiles({0.7});
  for (double v : {one.min, one.p01, one.p10, one.p50, one.p90, one.p99, one.max}) CHECK_EQ(v, 0.7);
  // NaN sorts after every number (and infinity stays a number).
  const RatioQuantiles odd = s3::train::ratio_quantiles({NAN, 2.0, INFINITY, 1.0});
  CHECK_EQ(odd.min, 1.0);
  CHECK_EQ(odd.p50, INFINITY);  // h = 1.5 between 2 and ∞
  CHECK(std::isnan(odd.max));
}

TEST(ratio_quantiles_of_the_fused_policy_gradient_loss_match_a_direct_computation) {
  constexpr int64_t T = 301, C = 6, V = 11;
  s3::ThreadPool pool(2);
  std::mt19937_64 rng(47);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> h(size_t(T * C)), head(size_t(V * C));
  for (float& x : h) x = n(rng);
  for (float& x : head) x = n(rng);
  std::vector<int32_t> targets(static_cast<size_t>(T));
  std::vector<float> coef(static_cast<size_t>(T)), old(static_cast<size_t>(T));
  std::vector<double> expected;  // ρ_t in f64 for the rows with a target and coef ≠ 0, in row order
  int64_t masked = 0;
  for (int64_t t = 0; t < T; t++) {
    targets[size_t(t)] = t % 17 == 5 ? -1 : int32_t(rng() % uint64_t(V));
    coef[size_t(t)] = t % 5 == 2 ? 0.0f : (t % 2 == 0 ? 0.5f : -0.25f);
    // log p(target | h_t) in f64, and an old log-prob at a log-ratio spread over [−3, 3]: many
    // rows fall outside the IcePop bounds [0.2, 5].
    double lp = 0.0;
    if (targets[size_t(t)] >= 0) {
      std::vector<double> z(size_t(V), 0.0);
      double max = -INFINITY, total = 0.0;
      for (int64_t v = 0; v < V; v++) {
        for (int64_t k = 0; k < C; k++) z[size_t(v)] += double(h[size_t(t * C + k)]) * double(head[size_t(v * C + k)]);
        max = std::max(max, z[size_t(v)]);
      }
      for (double x : z) total += std::exp(x - max);
      lp = z[size_t(targets[size_t(t)])] - max - std::log(total);
    }
    const double log_ratio = -3.0 + 6.0 * double(rng() % 10001) / 10000.0;
    old[size_t(t)] = float(lp - log_ratio);
    if (targets[size_t(t)] >= 0 && coef[size_t(t)] != 0.0f) {
      const double ratio = std::exp(lp - double(old[size_t(t)]));
      expected.push_back(ratio);
      if (ratio < 0.2 || ratio > 5.0) masked++;
    }
  }
  LossOptions o;
  o.kind = LossKind::PolicyGradient;
  o.chunk_rows = 7;  // many chunks
  std::vector<float> dh(size_t(T * C)), dhead(size_t(V * C), 0.0f);
  const s3::train::LossStats s =
      s3::train::fused_head_loss(dh.data(), dhead.data(), h.data(), head.data(), T, C, V,
                                 LossInputs{targets.data(), coef.data(), old.data()}, o, pool);
  CHECK_EQ(int64_t(s.ratios.size()), s.tokens);
  CHECK_EQ(s.ratios.size(), expected.size());
  CHECK(masked > 20);  // the mask removes these rows from the loss, not from the quantiles
  CHECK_EQ(s.masked, masked);
  double sum = 0.0;
  for (size_t i = 0; i < expected.size() && i < s.ratios.size(); i++) {
    CHECK_NEAR(s.ratios[i], expected[i], 1e-5 * expected[i]);
    sum += s.ratios[i];
  }
  CHECK_NEAR(sum, s.ratio_sum, 1e-9 * s.ratio_sum);
  const RatioQuantiles q = s3::train::ratio_quantiles(s.ratios);
  check_ordered(q);
  check_direct(q, s.ratios, 0.0);     // the same ratios: exactly
  check_direct(q, expected, 1e-4);    // the ratios from f64 log-probs: to f32 rounding
  CHECK(q.min < 0.2 && q.max > 5.0);  // the masked tail is in
  // Deterministic: a second run gives the same ratios, bit for bit.
  const s3::train::LossStats again =
      s3::train::fused_head_loss(dh.data(), dhead.data(), h.data(), head.data(), T, C, V,
                                 LossInputs{targets.data(), coef.data(), old.data()}, o, pool);
  CHECK(again.ratios == s.ratios);
  // The SFT loss collects no ratios.
  o.kind = LossKind::Sft;
  const s3::train::LossStats sft = s3::train::fused_head_loss(dh.data(), dhead.data(), h.data(), head.data(), T, C, V,
                                                              LossInputs{targets.data(), coef.data()}, o, pool);
  CHECK(sft.tokens > 0);
  CHECK(sft.ratios.empty());
}
