// Log-softmax, log-probs, entropy and temperature sampling; see sampling.h.
#include "cpu/sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ops/sampling.h"
#include "core/philox.h"

namespace s3::cpu {
namespace {

// The row's maximum, after refusing NaN, +inf and all -inf rows.
float checked_max(const float* logits, int64_t V) {
  float max = -INFINITY;
  for (int64_t i = 0; i < V; i++) {
    if (std::isnan(logits[i]) || logits[i] == INFINITY) {
      throw std::invalid_argument("logit " + std::to_string(i) + " is " + std::to_string(logits[i]) +
                                  "; expected a finite number or -inf");
    }
    max = std::max(max, logits[i]);
  }
  if (max == -INFINITY) throw std::invalid_argument("every one of the " + std::to_string(V) + " logits is -inf");
  return max;
}

// log Σ exp(logits[i] − max).
double log_sum_exp_shifted(const float* logits, int64_t V, float max) {
  double sum = 0.0;
  for (int64_t i = 0; i < V; i++) sum += std::exp(double(logits[i]) - double(max));
  return std::log(sum);
}

}  // namespace

void log_softmax_forward(float* out, const float* logits, int64_t V) {
  const float max = checked_max(logits, V);
  const double log_sum = log_sum_exp_shifted(logits, V, max);
  for (int64_t i = 0; i < V; i++) out[i] = float(double(logits[i]) - double(max) - log_sum);
}

float token_logprob(const float* logits, int64_t V, int32_t token) {
  if (token < 0 || token >= V) {
    throw std::out_of_range("token " + std::to_string(token) + " is outside the vocabulary [0, " +
                            std::to_string(V) + ")");
  }
  const float max = checked_max(logits, V);
  return float(double(logits[token]) - double(max) - log_sum_exp_shifted(logits, V, max));
}

float entropy_forward(const float* logits, int64_t V) {
  const float max = checked_max(logits, V);
  // H = log S − Σ w_i z_i / S with z_i = logit_i − max, w_i = e^{z_i}, S = Σ w_i.
  double sum = 0.0, weighted = 0.0;
  for (int64_t i = 0; i < V; i++) {
    const double z = double(logits[i]) - double(max);
    const double w = std::exp(z);
    if (w == 0.0) continue;  // -inf logits: 0 · log 0 = 0
    sum += w;
    weighted += w * z;
  }
  return float(std::log(sum) - weighted / sum);
}

void sample_forward(TokenDraw* draws, int64_t num_draws, const float* logits, int64_t V, float temperature,
                    uint64_t seed, uint64_t token_index) {
  if (!(temperature >= 0.0f)) {
    throw std::invalid_argument("temperature is " + std::to_string(temperature) + "; expected a number >= 0");
  }
  const float max = checked_max(logits, V);
  if (temperature == 0.0f) {
    const int32_t argmax = int32_t(std::find(logits, logits + V, max) - logits);
    for (int64_t i = 0; i < num_draws; i++) draws[i] = {argmax, 0.0f};
    return;
  }
  // Cumulative weights chunk by chunk (core/ops/sampling.h): r_j within each chunk, then P_c added.
  thread_local std::vector<double> cumulative;
  cumulative.resize(size_t(V));
  double prefix = 0.0;
  for (int64_t begin = 0; begin < V; begin += ops::kSampleChunk) {
    const int64_t end = std::min(V, begin + ops::kSampleChunk);
    double running = 0.0;
    for (int64_t j = begin; j < end; j++) {
      running += ops::sample_weight(logits[j], max, temperature);
      cumulative[size_t(j)] = prefix + running;
    }
    prefix += running;
  }
  const double total = prefix;
  for (int64_t i = 0; i < num_draws; i++) {
    const double target = double(philox_uniform(seed, token_index, uint32_t(i), kSamplingStream)) * total;
    const int64_t found = std::upper_bound(cumulative.begin(), cumulative.end(), target) - cumulative.begin();
    const int64_t token = std::min(found, V - 1);
    draws[i] = {int32_t(token), ops::sample_logprob(logits[token], max, temperature, total)};
  }
}

}  // namespace s3::cpu
