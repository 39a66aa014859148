// trainer: the s³ CPU trainer. f32 master weights of a Qwen3 checkpoint, gradients accumulated
// over micro-batches (accumulate), AdamW updates (step), and checkpoints (save / load) that
// resume bit-identically:
//   DIR/config.json             the model's Hugging Face config (copied from the source checkpoint)
//   DIR/model.safetensors       the weights, F32, under the checkpoint's tensor names (loadable
//                               by Qwen3Weights::load and transformers)
//   DIR/optimizer.safetensors   exp_avg.NAME and exp_avg_sq.NAME per parameter, in the dtype of
//                               the moments (options.adamw.state_dtype: F32, or BF16)
//   DIR/run_config.json         the caller's run configuration (JSON text), when one is given
//   DIR/trainer_state.json      {"step", "adamw": {..., "state_dtype": "f32" | "bf16"}, "loss": {...},
//                               "matmul_precision": "f32" | "bf16"}, written last (the precision is
//                               a record of how the step ran; a trainer of either may load it)
// Every file is written atomically (temp + fsync + rename). A checkpoint whose moments are of the
// other dtype than the trainer's is refused on load (TrainerError naming the file, the tensor and
// the dtype expected), not converted: open the trainer with the checkpoint's state dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/matmul_precision.h"
#include "core/thread_pool.h"
#include "model/qwen3_train.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"
#include "train/adamw.h"
#include "train/losses.h"

namespace s3::train {

class TrainerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrainerOptions {
  AdamWOptions adamw;
  double icepop_low = 0.2;   // IcePop bounds, compared in double precision (losses.h)
  double icepop_high = 5.0;
  int64_t loss_chunk_rows = 256;
  // Compute a prompt prefix that sequences of a micro-batch share once (train/shared_prefixes.h),
  // when at least this many tokens long; 0 turns sharing off (every sequence computed whole).
  int64_t shared_prefix_min_tokens = 16;
  size_t threads = 0;  // 0: default_thread_count()
  // precision.train: the matmuls of the forward, the backward and the LM-head loss in f32, or with
  // BF16-rounded operands and f32 sums (the paper's exploration setting, App. A.1); master
  // weights, gradients, AdamW and every reduction stay f32 either way.
  MatmulPrecision matmul_precision = MatmulPrecision::F32;
  // Opening a folder written by save(): restore its optimizer state and step (resume), or start
  // AdamW afresh from its weights (a new training stage on a saved model).
  bool restore_optimizer = true;
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

class Trainer {
 public:
  // Weights (any dtype) and config from a checkpoint directory; when it also holds
  // optimizer.safetensors and trainer_state.json (a Trainer::save), the optimizer state and step
  // are restored too.
  Trainer(const std::string& checkpoint_dir, const TrainerOptions& options);
  // From in-memory weights (tests); config_json is what save writes as config.json.
  Trainer(const model::Qwen3Weights& weights, std::string config_json, const TrainerOptions& options);

  StepDiagnostics accumulate(const TrainBatch& batch);  // adds into the gradients
  AdamWStepResult step();                               // update from the accumulated gradients, then zero them
  void zero_grad();
  void save(const std::string& dir, const std::string& run_config_json = "") const;
  void load(const std::string& dir);  // weights, optimizer state, step
  // The accumulated gradients as F32 safetensors under the parameters' names (atomic).
  void save_gradients(const std::string& path) const;

  const model::Qwen3Config& config() const { return config_; }
  const model::Qwen3ParamLayout& layout() const { return layout_; }
  const std::vector<float>& params() const { return params_; }
  std::vector<float>& mutable_params() { return params_; }
  const std::vector<float>& grads() const { return grads_; }
  int64_t step_count() const { return adam_.step; }
  const TrainerOptions& options() const { return options_; }
  void set_lr(double lr) { options_.adamw.lr = lr; }
  // Copies of the current weights, F32, for the inference engine.
  model::Qwen3Weights weights() const;

 private:
  void init(const model::Qwen3Weights& weights);
  model::Qwen3Config config_;
  std::string config_json_;
  TrainerOptions options_;
  model::Qwen3ParamLayout layout_;
  std::vector<float> params_, grads_;
  AdamWState adam_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace s3::train
