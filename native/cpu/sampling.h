// sampling.h: what the engine and the trainer read off a row of logits: log-softmax, the log-prob
// of a given token, entropy, and temperature sampling with extra independent draws. Everything is
// computed in double over the row with the max subtracted first (no overflow, -inf logits are
// allowed and get probability 0), in plain code that gives the same bits at every SIMD level.
#pragma once

#include <cstdint>

namespace s3::cpu {

// Philox stream of token sampling (core/philox.h); other random uses take other streams.
constexpr uint32_t kSamplingStream = 0;

// out, logits: [V]. out[i] = logits[i] − logsumexp(logits).
void log_softmax_forward(float* out, const float* logits, int64_t V);

// log softmax(logits)[token] for logits [V]; std::out_of_range if token is not in [0, V).
float token_logprob(const float* logits, int64_t V, int32_t token);

// −Σ p log p of softmax(logits), logits [V], in nats.
float entropy_forward(const float* logits, int64_t V);

struct TokenDraw {
  int32_t token;
  float logprob;  // log-prob of token under softmax(logits / temperature), the distribution it was drawn from
};

// draws: [num_draws]; draws[i] uses draw index i: draw 0 is the sampled token, draws 1 .. K the
// K extra independent draws. Each is a pure function of (logits, temperature, seed, token_index, i):
//   temperature > 0: inverse CDF. Weights w_j = exp((logits[j] − max) / temperature) in double and
//     their cumulative sums c_j, taken chunk by chunk as core/ops/sampling.h defines them (so the
//     CUDA sampler gets the same sums); with u = philox_uniform(seed, token_index, i,
//     kSamplingStream) in [0, 1), the token is the first j with c_j > u · total.
//   temperature == 0: greedy, the first index of the maximum, logprob 0 (a point mass).
// Throws std::invalid_argument for a negative or NaN temperature, a NaN or +inf logit, or a row
// whose logits are all -inf.
void sample_forward(TokenDraw* draws, int64_t num_draws, const float* logits, int64_t V, float temperature,
                    uint64_t seed, uint64_t token_index);

}  // namespace s3::cpu
