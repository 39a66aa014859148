// train_batch.h: what a trainer is given and what it reports, whatever device computes it: one
// micro-batch of packed sequences (TrainBatch), the statistics of its loss (StepDiagnostics), and the
// error a refused batch, option or checkpoint raises (TrainerError).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "train/losses.h"

namespace s3::train {

class TrainerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One micro-batch of packed sequences. coef[t] (and old_logprobs[t] for the policy gradient)
// weight log p(tokens[t + 1] | the sequence up to t); it must be 0 at the last token of each
// sequence. SFT: coef = mask · weight. Policy gradient: coef = team advantage · 1/|T_g| · w.
struct TrainBatch {
  LossKind kind = LossKind::Sft;
  std::vector<int32_t> tokens;
  std::vector<int64_t> seq_lengths;  // sum = tokens.size(); empty: one sequence
  std::vector<float> coef;
  std::vector<float> old_logprobs;   // policy gradient only
  // Score centering (policy gradient, optional): K draws per token, [T × K] each, recorded at
  // inference for the same positions as coef (token −1: no draw).
  int64_t num_draws = 0;
  std::vector<int32_t> draw_tokens;
  std::vector<float> draw_logprobs;
  // KL penalty towards a frozen reference policy (policy gradient, optional; see losses.h):
  // kl_coef β > 0 turns it on; ref_logprobs[t] and kl_weight[t] ≥ 0 are aligned with coef.
  float kl_coef = 0.0f;
  std::vector<float> ref_logprobs;
  std::vector<float> kl_weight;
  // Policy gradient: the sampling temperature, so π_θ is the distribution μ's log-probs were recorded under.
  double temperature = 1.0;
};

struct StepDiagnostics {
  double loss = 0.0;
  int64_t tokens = 0;
  double mean_ratio = 0.0;        // policy gradient: mean ρ over weighted tokens
  double fraction_masked = 0.0;   // policy gradient: IcePop-masked share of weighted tokens
  // Policy gradient: mean |log π_θ − log μ| over weighted tokens, masked ones included: how far the
  // sampler's log-probabilities (its weights, precision and lag) are from the trainer's. SFT: 0.
  double mean_abs_log_ratio = 0.0;
  double mean_entropy = 0.0;
  double mean_logprob = 0.0;
  double centering = 0.0;         // the score-centering surrogate (not in loss)
  double mean_draw_weight = 0.0;  // mean detached w_k per weighted token and draw
  double kl_mean = 0.0;           // KL penalty: mean k3 estimate over tokens with kl_weight > 0 (0 when off)
  int64_t shared_prefix_tokens = 0;  // rows not computed because a shared prefix stood in for them
  // Policy gradient: exact quantiles (losses.h: ratio_quantiles) of ρ_t over the `tokens` weighted
  // tokens, IcePop-masked ones included; all 0 when tokens is 0. SFT: all 1 (ρ ≡ 1, like mean_ratio)
  // when tokens > 0, else all 0.
  RatioQuantiles ratio_quantiles;
};

}  // namespace s3::train
