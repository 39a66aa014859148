// Log-softmax, log-probs, entropy and temperature sampling (native/cpu/sampling): exact values,
// no overflow, the empirical distribution of many draws against softmax(logits / T), and
// determinism of draws keyed by (seed, token index, draw index).
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/philox.h"
#include "cpu/sampling.h"
#include "tests/test_framework.h"

namespace {

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  double max = -INFINITY, total = 0.0;
  for (float l : logits) max = std::max(max, double(l));
  std::vector<double> p(logits.size());
  for (size_t i = 0; i < p.size(); i++) total += (p[i] = std::exp((logits[i] - max) / temperature));
  for (double& x : p) x /= total;
  return p;
}

}  // namespace

TEST(log_softmax_logprob_and_entropy_are_exact_and_do_not_overflow) {
  const std::vector<float> logits = {1000.0f, 999.0f, -1000.0f, 3.5f, -INFINITY, 1000.0f};
  const std::vector<double> p = softmax(logits, 1.0);
  std::vector<float> log_p(logits.size());
  s3::cpu::log_softmax_forward(log_p.data(), logits.data(), int64_t(logits.size()));
  double entropy = 0.0;
  for (size_t i = 0; i < logits.size(); i++) {
    if (p[i] > 0) entropy -= p[i] * std::log(p[i]);
    if (logits[i] == -INFINITY) {
      CHECK(log_p[i] == -INFINITY);
      continue;
    }
    CHECK_NEAR(log_p[i], logits[i] - 1000.0 - std::log(2.0 + std::exp(-1.0)), 1e-4);
    CHECK_EQ(s3::cpu::token_logprob(logits.data(), int64_t(logits.size()), int32_t(i)), log_p[i]);
  }
  CHECK_NEAR(s3::cpu::entropy_forward(logits.data(), int64_t(logits.size())), entropy, 1e-6);
  const std::vector<float> uniform(1000, 7.0f);
  CHECK_NEAR(s3::cpu::entropy_forward(uniform.data(), 1000), std::log(1000.0), 1e-5);
  CHECK_THROWS(std::out_of_range, s3::cpu::token_logprob(logits.data(), 6, 6));
  const float bad[] = {0.0f, NAN};
  CHECK_THROWS(std::invalid_argument, s3::cpu::entropy_forward(bad, 2));
  const float none[] = {-INFINITY, -INFINITY};
  CHECK_THROWS(std::invalid_argument, s3::cpu::log_softmax_forward(log_p.data(), none, 2));
}

TEST(sampling_frequencies_match_the_tempered_softmax) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, -1.0f, 0.0f, 1.5f, -INFINITY, 0.2f};
  for (float temperature : {1.0f, 0.6f, 1.7f}) {
    const std::vector<double> p = softmax(logits, temperature);
    const int draws = 40000;
    std::vector<int> counts(logits.size(), 0);
    for (int i = 0; i < draws; i++) {
      s3::cpu::TokenDraw draw;
      s3::cpu::sample_forward(&draw, 1, logits.data(), int64_t(logits.size()), temperature, 1234, uint64_t(i));
      counts[size_t(draw.token)]++;
      CHECK_NEAR(draw.logprob, std::log(p[size_t(draw.token)]), 1e-5);
    }
    CHECK_EQ(counts[6], 0);
    // Pearson chi-square over the 7 possible tokens (6 degrees of freedom): 22.5 is p = 0.001.
    double chi_square = 0.0;
    for (size_t i = 0; i < logits.size(); i++) {
      if (p[i] == 0.0) continue;
      const double expected = p[i] * draws;
      chi_square += (counts[i] - expected) * (counts[i] - expected) / expected;
    }
    CHECK(chi_square < 22.5);
  }
}

TEST(sampling_is_a_pure_function_of_its_key_and_extra_draws_are_independent) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); i++) logits[i] = float(std::sin(double(i))) * 0.5f;
  s3::cpu::TokenDraw first[9], second[9];
  s3::cpu::sample_forward(first, 9, logits.data(), 50, 0.8f, 77, 12);
  s3::cpu::sample_forward(second, 9, logits.data(), 50, 0.8f, 77, 12);
  std::set<int32_t> distinct;
  for (int i = 0; i < 9; i++) {
    CHECK_EQ(first[i].token, second[i].token);
    CHECK_EQ(first[i].logprob, second[i].logprob);
    distinct.insert(first[i].token);
    // Draw i does not depend on how many draws were asked for: its draw index keys it.
    s3::cpu::TokenDraw prefix[9];
    s3::cpu::sample_forward(prefix, i + 1, logits.data(), 50, 0.8f, 77, 12);
    CHECK_EQ(prefix[i].token, first[i].token);
  }
  CHECK(distinct.size() >= 5);  // 9 draws over a nearly flat 50-token distribution
  // Another token index or seed moves the main draw (over a few tries).
  int changed = 0;
  for (uint64_t t = 13; t < 23; t++) {
    s3::cpu::TokenDraw other;
    s3::cpu::sample_forward(&other, 1, logits.data(), 50, 0.8f, 77, t);
    changed += other.token != first[0].token;
  }
  CHECK(changed >= 5);
}

TEST(sampling_inverse_cdf_uses_the_philox_uniform) {
  // Two tokens with probabilities 1/4 and 3/4: the token is 1 exactly when u ≥ 1/4.
  const float logits[] = {0.0f, float(std::log(3.0))};
  for (uint64_t t = 0; t < 200; t++) {
    s3::cpu::TokenDraw draw;
    s3::cpu::sample_forward(&draw, 1, logits, 2, 1.0f, 5, t);
    const float u = s3::philox_uniform(5, t, 0, s3::cpu::kSamplingStream);
    CHECK_EQ(draw.token, u >= 0.25f ? 1 : 0);
  }
}

TEST(sampling_temperature_zero_is_greedy_and_bad_temperatures_are_refused) {
  const float logits[] = {0.5f, 3.0f, -1.0f, 3.0f};
  s3::cpu::TokenDraw draws[3];
  s3::cpu::sample_forward(draws, 3, logits, 4, 0.0f, 1, 1);
  for (const s3::cpu::TokenDraw& d : draws) {
    CHECK_EQ(d.token, 1);
    CHECK_EQ(d.logprob, 0.0f);
  }
  CHECK_THROWS(std::invalid_argument, s3::cpu::sample_forward(draws, 1, logits, 4, -1.0f, 1, 1));
  CHECK_THROWS(std::invalid_argument, s3::cpu::sample_forward(draws, 1, logits, 4, NAN, 1, 1));
}
