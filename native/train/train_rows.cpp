// train_rows.cpp: the implementation of train/train_rows.h.
#include "train/train_rows.h"

#include <cmath>
#include <string>

#include "core/json.h"
#include "train/shared_prefixes.h"

namespace s3::train {

namespace {

// The rows of the shared-prefix layout: each from its source row; prefix rows carry no loss
// (target −1, every weight 0, no draws).
TrainRowInputs gathered(const TrainRowInputs& in, const SharedPrefixLayout& layout, int64_t K) {
  const size_t rows = layout.tokens.size();
  TrainRowInputs out;
  out.tokens = layout.tokens;
  out.targets.assign(rows, -1);
  out.coef.assign(rows, 0.0f);
  if (!in.old_logprobs.empty()) out.old_logprobs.assign(rows, 0.0f);
  if (!in.draw_tokens.empty()) out.draw_tokens.assign(rows * size_t(K), -1);
  if (!in.draw_logprobs.empty()) out.draw_logprobs.assign(rows * size_t(K), 0.0f);
  if (!in.ref_logprobs.empty()) out.ref_logprobs.assign(rows, 0.0f);
  if (!in.kl_weight.empty()) out.kl_weight.assign(rows, 0.0f);
  for (size_t r = 0; r < rows; r++) {
    if (layout.prefix_row[r]) continue;
    const size_t from = size_t(layout.source[r]);
    out.targets[r] = in.targets[from];
    out.coef[r] = in.coef[from];
    if (!in.old_logprobs.empty()) out.old_logprobs[r] = in.old_logprobs[from];
    for (size_t k = 0; k < size_t(K) && !in.draw_tokens.empty(); k++) {
      out.draw_tokens[r * size_t(K) + k] = in.draw_tokens[from * size_t(K) + k];
      out.draw_logprobs[r * size_t(K) + k] = in.draw_logprobs[from * size_t(K) + k];
    }
    if (!in.ref_logprobs.empty()) out.ref_logprobs[r] = in.ref_logprobs[from];
    if (!in.kl_weight.empty()) out.kl_weight[r] = in.kl_weight[from];
  }
  return out;
}

}  // namespace

model::Qwen3TrainBatch TrainRows::model_batch() const {
  return model::Qwen3TrainBatch{in.tokens.data(), rows(), begins.data(), int64_t(begins.size() - 1), parents.data()};
}

LossInputs TrainRows::loss_inputs() const {
  const int64_t K = num_draws;
  const auto or_null = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
  return LossInputs{in.targets.data(), in.coef.data(),        or_null(in.old_logprobs), K,
                    K > 0 ? in.draw_tokens.data() : nullptr,  K > 0 ? in.draw_logprobs.data() : nullptr,
                    or_null(in.ref_logprobs),                 or_null(in.kl_weight)};
}

TrainRows prepare_train_rows(const TrainBatch& b, int32_t vocab_size, int64_t shared_prefix_min_tokens) {
  const int64_t T = int64_t(b.tokens.size());
  if (T == 0) throw TrainerError("accumulate: empty batch");
  if (int64_t(b.coef.size()) != T) {
    throw TrainerError("accumulate: coef has " + std::to_string(b.coef.size()) + " entries for " + std::to_string(T) +
                       " tokens");
  }
  if (b.kind == LossKind::PolicyGradient && int64_t(b.old_logprobs.size()) != T) {
    throw TrainerError("accumulate: old_logprobs has " + std::to_string(b.old_logprobs.size()) + " entries for " +
                       std::to_string(T) + " tokens");
  }
  if (b.num_draws < 0) throw TrainerError("accumulate: num_draws must be non-negative");
  if (b.num_draws > 0) {
    if (b.kind != LossKind::PolicyGradient) throw TrainerError("accumulate: score-centering draws need the policy-gradient loss");
    const size_t want = size_t(T) * size_t(b.num_draws);
    if (b.draw_tokens.size() != want || b.draw_logprobs.size() != want) {
      throw TrainerError("accumulate: draw_tokens and draw_logprobs need tokens × num_draws = " + std::to_string(want) +
                         " entries");
    }
    for (int32_t u : b.draw_tokens) {
      if (u < -1 || u >= vocab_size) throw TrainerError("accumulate: draw token " + std::to_string(u) + " out of range");
    }
  }
  const bool kl = b.kl_coef != 0.0f;
  if (!std::isfinite(b.kl_coef) || b.kl_coef < 0.0f) {
    throw TrainerError("accumulate: kl_coef must be a finite number ≥ 0, got " + json_number(b.kl_coef));
  }
  if (!(b.temperature > 0.0) || !std::isfinite(b.temperature)) {
    throw TrainerError("accumulate: temperature must be a finite number > 0, got " + json_number(b.temperature));
  }
  if (kl) {
    if (b.kind != LossKind::PolicyGradient) throw TrainerError("accumulate: the KL penalty needs the policy-gradient loss");
    if (int64_t(b.ref_logprobs.size()) != T || int64_t(b.kl_weight.size()) != T) {
      throw TrainerError("accumulate: the KL penalty needs ref_logprobs and kl_weight with one entry per token (" +
                         std::to_string(T) + "), got " + std::to_string(b.ref_logprobs.size()) + " and " +
                         std::to_string(b.kl_weight.size()));
    }
    for (size_t t = 0; t < size_t(T); t++) {
      if (!std::isfinite(b.ref_logprobs[t]) || !std::isfinite(b.kl_weight[t]) || b.kl_weight[t] < 0.0f) {
        throw TrainerError("accumulate: ref_logprobs must be finite and kl_weight finite and ≥ 0 (token " +
                           std::to_string(t) + ")");
      }
    }
  }
  std::vector<int64_t> begins{0};
  if (b.seq_lengths.empty()) {
    begins.push_back(T);
  } else {
    for (int64_t len : b.seq_lengths) {
      if (len <= 0) throw TrainerError("accumulate: sequence lengths must be positive");
      begins.push_back(begins.back() + len);
    }
    if (begins.back() != T) throw TrainerError("accumulate: sequence lengths do not sum to the token count");
  }
  std::vector<int32_t> targets(size_t(T), -1);
  for (size_t s = 0; s + 1 < begins.size(); s++) {
    for (int64_t t = begins[s]; t < begins[s + 1]; t++) {
      if (t + 1 < begins[s + 1]) {
        targets[size_t(t)] = b.tokens[size_t(t + 1)];
      } else if (b.coef[size_t(t)] != 0.0f || (kl && b.kl_weight[size_t(t)] != 0.0f)) {
        throw TrainerError(
            "accumulate: coef and kl_weight must be 0 at the last token of each sequence (it has no next token)");
      }
    }
  }
  for (float c : b.coef) {
    if (!std::isfinite(c)) throw TrainerError("accumulate: coef must be finite");
  }
  // Every per-row input, laid out for the model: as given, or with shared prefixes computed once.
  const int64_t K = b.num_draws;
  const bool pg = b.kind == LossKind::PolicyGradient;
  TrainRows out;
  out.num_draws = K;
  out.in = TrainRowInputs{b.tokens,
                          std::move(targets),
                          b.coef,
                          pg ? b.old_logprobs : std::vector<float>{},
                          K > 0 ? b.draw_tokens : std::vector<int32_t>{},
                          K > 0 ? b.draw_logprobs : std::vector<float>{},
                          kl ? b.ref_logprobs : std::vector<float>{},
                          kl ? b.kl_weight : std::vector<float>{}};
  out.parents.assign(begins.size() - 1, -1);
  if (shared_prefix_min_tokens > 0) {
    std::vector<int64_t> first_weighted(begins.size() - 1);
    for (size_t s = 0; s + 1 < begins.size(); s++) {
      int64_t t = begins[s];
      while (t < begins[s + 1] && b.coef[size_t(t)] == 0.0f && !(kl && b.kl_weight[size_t(t)] != 0.0f)) t++;
      first_weighted[s] = t - begins[s];
    }
    SharedPrefixLayout shared = share_prefixes(b.tokens, begins, first_weighted, shared_prefix_min_tokens);
    if (shared.shared_rows > 0) {
      out.shared_rows = shared.shared_rows;
      out.in = gathered(out.in, shared, K);
      begins = std::move(shared.begins);
      out.parents = std::move(shared.parent);
    }
  }
  out.begins = std::move(begins);
  return out;
}

LossOptions train_loss_options(const TrainBatch& batch, double icepop_low, double icepop_high, int64_t chunk_rows,
                               MatmulPrecision precision) {
  LossOptions lo;
  lo.kind = batch.kind;
  lo.icepop_low = icepop_low;
  lo.icepop_high = icepop_high;
  lo.chunk_rows = chunk_rows;
  lo.kl_coef = batch.kl_coef;
  lo.temperature = batch.temperature;
  lo.precision = precision;
  return lo;
}

StepDiagnostics step_diagnostics(const LossStats& s, const TrainBatch& b, int64_t shared_rows) {
  StepDiagnostics d;
  d.loss = s.loss;
  d.tokens = s.tokens;
  if (s.tokens > 0) {
    d.mean_ratio = b.kind == LossKind::PolicyGradient ? s.ratio_sum / double(s.tokens) : 1.0;
    d.fraction_masked = double(s.masked) / double(s.tokens);
    d.mean_entropy = s.entropy_sum / double(s.tokens);
    d.mean_logprob = s.logprob_sum / double(s.tokens);
    if (b.num_draws > 0) d.mean_draw_weight = s.draw_weight_sum / double(s.tokens * b.num_draws);
    if (b.kind == LossKind::PolicyGradient) {
      double abs_log = 0.0;
      for (const double ratio : s.ratios) abs_log += std::fabs(std::log(ratio));
      d.mean_abs_log_ratio = abs_log / double(s.tokens);
      d.ratio_quantiles = ratio_quantiles(s.ratios);
    } else {
      d.ratio_quantiles = RatioQuantiles{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
    }
  }
  d.centering = s.centering;
  d.shared_prefix_tokens = shared_rows;
  if (s.kl_tokens > 0) d.kl_mean = s.kl_sum / double(s.kl_tokens);
  return d;
}

}  // namespace s3::train
