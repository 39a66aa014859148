// losses: the s³ token losses fused with the LM head (SPEC §6), chunked over tokens so the
// [T × V] logits of a whole batch never exist at once. Row t of the LM head input h [T × C]
// predicts targets[t] (−1: no target, row ignored); lp_t = log p(targets[t] | h_t).
//   SFT (weighted cross-entropy):  L = −Σ_t coef_t · lp_t            (coef = mask · weight)
//   Policy gradient (Eq. 3):       ρ_t = exp(lp_t − old_t), m_t = 1[low ≤ ρ_t ≤ high] (held fixed),
//                                  L = −Σ_t m_t · ρ_t · coef_t       (coef = team advantage · 1/|T_g| · w)
//   Score centering (Appendix A.1, policy gradient only, when draws are given): with K recorded
//   draws u_{t,k} ~ μ(·|c_t) and their sampler log-probs, w_k = 1[low ≤ π(u_k)/μ(u_k) ≤ high] ·
//   π(u_k)/μ(u_k) (detached), the surrogate adds  +Σ_t coef_t · (1/K) Σ_k w_k · log π(u_k), so
//   the gradient per token becomes −coef_t (m_t ρ_t s(a_t) − (1/K) Σ_k w_k s(u_k)).
//   KL penalty (policy gradient only, when kl_coef β > 0): towards a frozen reference policy,
//   with the k3 estimator of Schulman ("Approximating KL divergence", joschu.net/blog/kl-approx.html)
//   as in GRPO. With r_t = ref_t − lp_t (reference minus current log-prob of the taken token),
//                                  KL_t = exp(r_t) − r_t − 1 ≥ 0 (unbiased for KL(π ‖ π_ref) under π),
//                                  L += β · Σ_t kw_t · KL_t,    ∂L/∂lp_t += β · kw_t · (1 − exp(r_t)).
//   kw_t ≥ 0 is its own weight (1/|T_g| · 1/|B| on generated tokens, 0 elsewhere), not coef_t, so
//   the penalty does not take the sign of the advantage; the IcePop mask does not apply to it.
// Rows with coef 0 (and, with the KL penalty, kl_weight 0) cost nothing.
// Each row's softmax is in double: e^((z_v − max) / τ) and its sums over the vocabulary by
// cpu/loss_row.h, the same bits at every SIMD level.
// Ratio quantiles (policy gradient): LossStats::ratios keeps ρ_t of every row counted in tokens
// (target and coef ≠ 0, the rows mean_ratio averages over), IcePop-masked rows included (their
// ratios are the tail the mask cuts), in row order; ratio_quantiles summarises them exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "core/matmul_precision.h"
#include "core/ops/token_loss.h"
#include "core/thread_pool.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/packed_weights.h"

namespace s3::train {

enum class LossKind { Sft, PolicyGradient };

struct LossOptions {
  LossKind kind = LossKind::Sft;
  // IcePop keeps a token when icepop_low ≤ π_θ/μ ≤ icepop_high, compared in double precision (a float
  // 0.2 is 0.2000000030, which would mask ratios the paper's bound keeps).
  double icepop_low = 0.2;
  double icepop_high = 5.0;
  int64_t chunk_rows = 256;  // rows of the LM head per chunk: fewer passes over head and dhead per token
  float kl_coef = 0.0f;  // β of the KL penalty; 0: off (ref_logprobs and kl_weight are then ignored)
  // Policy gradient: π_θ is softmax(logits / temperature), the distribution the sampler drew from
  // (and recorded μ's log-probs under); 1 leaves every bit as without it. SFT ignores it.
  double temperature = 1.0;
  // The LM head's three products (logits = h·headᵀ, dh = dlogits·head, dhead += dlogitsᵀ·h): f32,
  // or BF16-rounded operands with f32 sums (through cpu/matmul_nn_bf16.h on the head packed once
  // per version where the CPU has BF16 kernels; below avx512bf16 the logits through
  // cpu/linear_bf16.h). The softmax, the per-row arithmetic and every statistic are
  // f32/f64 at either.
  MatmulPrecision precision = MatmulPrecision::F32;
};

struct LossInputs {
  const int32_t* targets = nullptr;       // [T], −1 where there is none
  const float* coef = nullptr;            // [T]
  const float* old_logprobs = nullptr;    // [T], policy gradient only
  int64_t num_draws = 0;                  // K; 0: no score centering
  const int32_t* draw_tokens = nullptr;   // [T × K], −1 for a missing draw
  const float* draw_logprobs = nullptr;   // [T × K], the sampler's log μ(u_k | c_t)
  const float* ref_logprobs = nullptr;    // [T], KL penalty only: log π_ref(targets[t] | c_t)
  const float* kl_weight = nullptr;       // [T], KL penalty only: kw_t ≥ 0
};

struct LossStats {
  double loss = 0.0;          // the policy-gradient or SFT loss plus the KL penalty (not centering)
  int64_t tokens = 0;         // rows with a target and coef ≠ 0
  double ratio_sum = 0.0;     // Σ ρ over those rows (policy gradient)
  int64_t masked = 0;         // rows the IcePop mask zeroed
  double entropy_sum = 0.0;   // Σ entropy of p(· | h_t) over those rows
  double logprob_sum = 0.0;   // Σ lp_t over those rows
  double centering = 0.0;     // the score-centering surrogate Σ_t coef_t (1/K) Σ_k w_k log π(u_k) (not in loss)
  double draw_weight_sum = 0.0;  // Σ w_k over all draws
  double kl_sum = 0.0;        // Σ KL_t over rows with kl_weight > 0 (KL penalty on; unweighted)
  int64_t kl_tokens = 0;      // rows with a target and kl_weight > 0 (KL penalty on)
  std::vector<double> ratios;  // policy gradient: ρ_t of each of the `tokens` rows (masked ones too), row order
  void add(const LossStats& o) {
    ratios.insert(ratios.end(), o.ratios.begin(), o.ratios.end());
    centering += o.centering;
    draw_weight_sum += o.draw_weight_sum;
    loss += o.loss;
    tokens += o.tokens;
    ratio_sum += o.ratio_sum;
    masked += o.masked;
    entropy_sum += o.entropy_sum;
    logprob_sum += o.logprob_sum;
    kl_sum += o.kl_sum;
    kl_tokens += o.kl_tokens;
  }
};

// Exact quantiles of a set of importance ratios: the order statistics x_(0) ≤ … ≤ x_(n−1) of a
// sorted copy (NaN sorted last), and p_q by linear interpolation between closest ranks (numpy's
// default, Hyndman & Fan type 7): h = (n − 1)·q, p_q = x_(⌊h⌋) + (h − ⌊h⌋)·(x_(⌊h⌋+1) − x_(⌊h⌋)).
// So min = p_0 and max = p_1; one value gives every field that value; no values: every field 0.
struct RatioQuantiles {
  double min = 0.0, p01 = 0.0, p10 = 0.0, p50 = 0.0, p90 = 0.0, p99 = 0.0, max = 0.0;
};
RatioQuantiles ratio_quantiles(std::vector<double> values);

// The pieces the CPU loss below and the device's (train/losses_cuda.h) share, so the two select,
// compute and count rows alike:
// The rows that cost something (a target, and coef ≠ 0 or a KL weight > 0), in order; refuses
// inputs the options need but lack, a temperature that is not a finite positive number, and
// targets or draws outside the vocabulary (std::invalid_argument).
std::vector<int64_t> loss_rows(int64_t T, int64_t V, const LossInputs& inputs, const LossOptions& options);
ops::TokenLossSettings token_loss_settings(const LossInputs& inputs, const LossOptions& options);
// Row t's inputs (its draws point into inputs' arrays).
ops::TokenLossRowInput token_loss_row_input(const LossInputs& inputs, const ops::TokenLossSettings& settings, int64_t t);
// Adds one row's contribution (and, policy gradient, its ratio) to stats.
void add_token_loss_row(LossStats& stats, const ops::TokenLossRow& row, bool policy_gradient);

// fused_head_loss's buffers, kept by a caller that runs it again and again (a trainer), so each
// call reuses pages the last one faulted in instead of taking fresh ones (a chunk's logits are
// R × V floats: 150 MiB at 256 rows of Qwen3's vocabulary).
struct HeadLossScratch {
  std::vector<float> hc, hc_t, logits, dhc, logits_scratch, rounded_input;
  std::vector<uint16_t> head_bf16;  // bf16 below avx512bf16: the head rounded once per call
  // bf16 with BF16 kernels (avx512bf16, amx): the head as dh's B and headᵀ as the logits' B
  // (cpu/packed_weights.h), kept between calls while head_version is nonzero and unchanged: a caller
  // that sets it must change it whenever the head's values change. 0: packed every call.
  cpu::PackedWeights head_packed;
  uint64_t head_version = 0;
  std::vector<std::vector<double>> row_exp, row_draw_coef;
};

// dh [T × C] overwritten with ∂L/∂h; dhead [V × C] += ∂L/∂head. head is f32 [V × C]. `scratch`,
// when given, holds the buffers between calls (the same results either way).
LossStats fused_head_loss(float* dh, float* dhead, const float* h, const float* head, int64_t T, int64_t C, int64_t V,
                          const LossInputs& inputs, const LossOptions& options, ThreadPool& pool,
                          HeadLossScratch* scratch = nullptr);

}  // namespace s3::train
