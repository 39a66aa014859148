// ops/token_loss.h: one row of the fused LM-head loss (train/losses.h has the formulas), shared by
// train/losses (the CPU) and train/losses_cuda (the device): from a row's logits z [V], its maximum
// and the two sums over the vocabulary (each side's own reduction), what the row adds to the loss
// and the statistics, and the gradient ∂L/∂z_v it writes back. Everything after the reductions is
// this one code, so the two sides differ only by the order of those sums, the last bit of exp and
// log, and the device compiler's fused multiply-adds in the row's few scalar steps.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

// What the loss computes, the same for every row.
struct TokenLossSettings {
  bool policy_gradient = false;  // else SFT
  bool kl = false;               // the k3 KL penalty (policy gradient, kl_coef > 0)
  int64_t num_draws = 0;         // K of score centering (policy gradient); 0: none
  double icepop_low = 0.2, icepop_high = 5.0;
  double temperature = 1.0;  // policy gradient's; 1 for SFT
  double kl_coef = 0.0;
};

// One row's inputs (from train::LossInputs at the row's token).
struct TokenLossRowInput {
  int32_t target = 0;
  double coef = 0.0;
  float old_logprob = 0.0f, ref_logprob = 0.0f, kl_weight = 0.0f;
  const int32_t* draw_tokens = nullptr;   // [num_draws], −1 for a missing draw
  const float* draw_logprobs = nullptr;   // [num_draws]
};

// What one row contributes (train::LossStats' fields for that row), and the two numbers its
// gradient needs: g = ∂L/∂lp of the target and draw_total = Σ_k c_k of the draws.
struct TokenLossRow {
  double loss = 0.0, ratio = 0.0, entropy = 0.0, logprob = 0.0, centering = 0.0, draw_weight_sum = 0.0, kl = 0.0;
  int32_t tokens = 0, masked = 0, kl_tokens = 0;
  double g = 0.0, draw_total = 0.0;
};

// (z − max) / temperature: the tempered logit, in double (temperature 1 changes no bit).
S3_HOST_DEVICE inline double token_loss_scaled(float z, float max, double temperature) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(double(__fsub_rn(z, max)), temperature);
#else
  return double(z - max) / temperature;
#endif
}

// The row from its logits z, their maximum, total = Σ_v exp(scaled_v) and weighted =
// Σ_v exp(scaled_v)·scaled_v. draw_coef [num_draws] receives each draw's c_k = coef·w_k/K.
S3_HOST_DEVICE inline TokenLossRow token_loss_row(const TokenLossSettings& s, const TokenLossRowInput& in, const float* z,
                                                  float max, double total, double weighted, double* draw_coef) {
  using std::exp;
  using std::expm1;
  using std::log;
  TokenLossRow row;
  const double log_total = log(total);
  const double lp = token_loss_scaled(z[in.target], max, s.temperature) - log_total;
  double g = 0.0;
  const double coef = in.coef;
  if (coef != 0.0) {  // a row may be here for the KL penalty alone
    row.tokens = 1;
    row.entropy = log_total - weighted / total;
    row.logprob = lp;
    if (!s.policy_gradient) {
      row.loss = -coef * lp;
      g = -coef;
    } else {
      const double ratio = exp(lp - double(in.old_logprob));
      row.ratio = ratio;
      const bool keep = ratio >= s.icepop_low && ratio <= s.icepop_high;
      row.masked = keep ? 0 : 1;
      row.loss = keep ? -ratio * coef : 0.0;
      g = keep ? -ratio * coef : 0.0;
    }
  }
  if (s.kl && in.kl_weight > 0.0f) {
    // k3: KL_t = exp(r) − r − 1 and ∂KL_t/∂lp = 1 − exp(r), written with expm1 for small r.
    const double r = double(in.ref_logprob) - lp;
    const double kl_t = expm1(r) - r;
    const double scale = s.kl_coef * double(in.kl_weight);
    row.kl = kl_t;
    row.kl_tokens = 1;
    row.loss += scale * kl_t;
    g -= scale * expm1(r);
  }
  // Score centering: draw k contributes c_k = coef·w_k/K times (1[v = u_k] − p_v) to ∂L/∂z_v.
  double draw_total = 0.0;
  const int64_t K = s.num_draws > 0 && coef != 0.0 ? s.num_draws : 0;
  for (int64_t k = 0; k < K; k++) {
    draw_coef[k] = 0.0;
    const int32_t u = in.draw_tokens[k];
    if (u < 0) continue;
    const double lpu = token_loss_scaled(z[u], max, s.temperature) - log_total;
    const double ratio = exp(lpu - double(in.draw_logprobs[k]));
    const double w = (ratio >= s.icepop_low && ratio <= s.icepop_high) ? ratio : 0.0;
    row.draw_weight_sum += w;
    row.centering += coef * w * lpu / double(K);
    draw_coef[k] = coef * w / double(K);
    draw_total += draw_coef[k];
  }
  row.g = g;
  row.draw_total = draw_total;
  return row;
}

// ∂L/∂z_v before the target's and the draws' own terms: −(g + draw_total)·p_v / temperature with
// p_v = e_v / total (e_v = exp(scaled_v), inv_total = 1/total).
S3_HOST_DEVICE inline float token_loss_dlogit(const TokenLossRow& row, double e, double inv_total, double temperature) {
  return float(-(row.g + row.draw_total) * e * inv_total / temperature);
}

}  // namespace s3::ops
