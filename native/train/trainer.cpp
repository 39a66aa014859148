// trainer.cpp: the implementation of train/trainer.h (see the header for the contract and layouts).
#include "train/trainer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/safetensors.h"
#include "train/shared_prefixes.h"

namespace s3::train {

namespace {

// The per-row inputs of a micro-batch (empty vectors for the parts its loss does not use).
struct RowInputs {
  std::vector<int32_t> tokens, targets;
  std::vector<float> coef, old_logprobs;
  std::vector<int32_t> draw_tokens;
  std::vector<float> draw_logprobs, ref_logprobs, kl_weight;

  // The rows of the shared-prefix layout: each from its source row; prefix rows carry no loss
  // (target −1, every weight 0, no draws).
  RowInputs gathered(const SharedPrefixLayout& layout, int64_t K) const {
    const size_t rows = layout.tokens.size();
    RowInputs out;
    out.tokens = layout.tokens;
    out.targets.assign(rows, -1);
    out.coef.assign(rows, 0.0f);
    if (!old_logprobs.empty()) out.old_logprobs.assign(rows, 0.0f);
    if (!draw_tokens.empty()) out.draw_tokens.assign(rows * size_t(K), -1);
    if (!draw_logprobs.empty()) out.draw_logprobs.assign(rows * size_t(K), 0.0f);
    if (!ref_logprobs.empty()) out.ref_logprobs.assign(rows, 0.0f);
    if (!kl_weight.empty()) out.kl_weight.assign(rows, 0.0f);
    for (size_t r = 0; r < rows; r++) {
      if (layout.prefix_row[r]) continue;
      const size_t from = size_t(layout.source[r]);
      out.targets[r] = targets[from];
      out.coef[r] = coef[from];
      if (!old_logprobs.empty()) out.old_logprobs[r] = old_logprobs[from];
      for (size_t k = 0; k < size_t(K) && !draw_tokens.empty(); k++) {
        out.draw_tokens[r * size_t(K) + k] = draw_tokens[from * size_t(K) + k];
        out.draw_logprobs[r * size_t(K) + k] = draw_logprobs[from * size_t(K) + k];
      }
      if (!ref_logprobs.empty()) out.ref_logprobs[r] = ref_logprobs[from];
      if (!kl_weight.empty()) out.kl_weight[r] = kl_weight[from];
    }
    return out;
  }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TrainerError("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void make_dirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      throw TrainerError("cannot create directory " + partial + ": " + std::strerror(errno));
    }
  }
}

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

Trainer::Trainer(const std::string& dir, const TrainerOptions& options) : options_(options) {
  const model::Qwen3Weights weights = model::Qwen3Weights::load(dir);
  config_json_ = read_text(dir + "/config.json");
  init(weights);
  if (options.restore_optimizer && exists(dir + "/optimizer.safetensors") && exists(dir + "/trainer_state.json")) load(dir);
}

Trainer::Trainer(const model::Qwen3Weights& weights, std::string config_json, const TrainerOptions& options)
    : config_json_(std::move(config_json)), options_(options) {
  init(weights);
}

void Trainer::init(const model::Qwen3Weights& weights) {
  config_ = weights.config();
  layout_ = model::Qwen3ParamLayout::make(config_);
  params_ = model::qwen3_params_from_weights(weights, layout_);
  grads_.assign(layout_.total, 0.0f);
  adam_ = AdamWState{};
  if (options_.adamw.state_dtype == OptimizerStateDtype::Bf16) {
    adam_.m_bf16.assign(layout_.total, 0);
    adam_.v_bf16.assign(layout_.total, 0);
  } else {
    adam_.m.assign(layout_.total, 0.0f);
    adam_.v.assign(layout_.total, 0.0f);
  }
  pool_ = std::make_unique<ThreadPool>(options_.threads > 0 ? options_.threads : default_thread_count());
}

StepDiagnostics Trainer::accumulate(const TrainBatch& b) {
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
      if (u < -1 || u >= config_.vocab_size) throw TrainerError("accumulate: draw token " + std::to_string(u) + " out of range");
    }
  }
  const bool kl = b.kl_coef != 0.0f;
  if (!std::isfinite(b.kl_coef) || b.kl_coef < 0.0f) {
    throw TrainerError("accumulate: kl_coef must be a finite number ≥ 0, got " + number(b.kl_coef));
  }
  if (!(b.temperature > 0.0) || !std::isfinite(b.temperature)) {
    throw TrainerError("accumulate: temperature must be a finite number > 0, got " + number(b.temperature));
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
  const std::vector<int32_t> none_i;
  const std::vector<float> none_f;
  RowInputs in{b.tokens,
               std::move(targets),
               b.coef,
               pg ? b.old_logprobs : none_f,
               K > 0 ? b.draw_tokens : none_i,
               K > 0 ? b.draw_logprobs : none_f,
               kl ? b.ref_logprobs : none_f,
               kl ? b.kl_weight : none_f};
  std::vector<int64_t> parents(begins.size() - 1, -1);
  int64_t shared_rows = 0;
  if (options_.shared_prefix_min_tokens > 0) {
    std::vector<int64_t> first_weighted(begins.size() - 1);
    for (size_t s = 0; s + 1 < begins.size(); s++) {
      int64_t t = begins[s];
      while (t < begins[s + 1] && b.coef[size_t(t)] == 0.0f && !(kl && b.kl_weight[size_t(t)] != 0.0f)) t++;
      first_weighted[s] = t - begins[s];
    }
    SharedPrefixLayout shared = share_prefixes(b.tokens, begins, first_weighted, options_.shared_prefix_min_tokens);
    if (shared.shared_rows > 0) {
      shared_rows = shared.shared_rows;
      in = in.gathered(shared, K);
      begins = std::move(shared.begins);
      parents = std::move(shared.parent);
    }
  }
  const int64_t rows = int64_t(in.tokens.size());
  const model::Qwen3TrainBatch batch{in.tokens.data(), rows, begins.data(), int64_t(begins.size() - 1), parents.data()};
  model::Qwen3TrainState state;
  try {
    model::qwen3_train_forward(config_, layout_, params_.data(), batch, state, *pool_, options_.matmul_precision);
  } catch (const std::invalid_argument& e) {
    throw TrainerError(std::string("accumulate: ") + e.what());
  }
  LossOptions lo;
  lo.kind = b.kind;
  lo.icepop_low = options_.icepop_low;
  lo.icepop_high = options_.icepop_high;
  lo.chunk_rows = options_.loss_chunk_rows;
  lo.kl_coef = b.kl_coef;
  lo.temperature = b.temperature;
  lo.precision = options_.matmul_precision;
  std::vector<float> dh(state.final_normed.size());
  const LossStats s = fused_head_loss(dh.data(), grads_.data() + layout_.lm_head, state.final_normed.data(),
                                      params_.data() + layout_.lm_head, rows, config_.hidden_size, config_.vocab_size,
                                      LossInputs{in.targets.data(), in.coef.data(),
                                                 pg ? in.old_logprobs.data() : nullptr,
                                                 K, K > 0 ? in.draw_tokens.data() : nullptr,
                                                 K > 0 ? in.draw_logprobs.data() : nullptr,
                                                 kl ? in.ref_logprobs.data() : nullptr, kl ? in.kl_weight.data() : nullptr},
                                      lo, *pool_);
  model::qwen3_train_backward(config_, layout_, params_.data(), grads_.data(), batch, state, dh.data(), *pool_);
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

AdamWStepResult Trainer::step() {
  const AdamWStepResult r = adamw_step(params_.data(), grads_.data(), params_.size(), adam_, options_.adamw, *pool_);
  zero_grad();
  return r;
}

void Trainer::zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

model::Qwen3Weights Trainer::weights() const {
  return model::Qwen3Weights::from_tensors(config_, model::qwen3_param_tensors(layout_, params_.data()),
                                           model::Qwen3Weights::Storage::Copy, "trainer weights");
}

void Trainer::save(const std::string& dir, const std::string& run_config_json) const {
  make_dirs(dir);
  if (!run_config_json.empty()) {
    parse_json(run_config_json);  // refuse what is not JSON before writing anything
    write_file_atomic(dir + "/run_config.json", run_config_json.data(), run_config_json.size());
  }
  write_file_atomic(dir + "/config.json", config_json_.data(), config_json_.size());
  const bool bf16 = options_.adamw.state_dtype == OptimizerStateDtype::Bf16;
  const DType moment_dtype = bf16 ? DType::BF16 : DType::F32;
  std::vector<TensorToWrite> model_tensors, optimizer_tensors;
  for (const auto& e : layout_.entries) {
    model_tensors.push_back({e.name, DType::F32, e.shape, params_.data() + e.offset});
    optimizer_tensors.push_back({"exp_avg." + e.name, moment_dtype, e.shape,
                                 bf16 ? static_cast<const void*>(adam_.m_bf16.data() + e.offset) : adam_.m.data() + e.offset});
    optimizer_tensors.push_back({"exp_avg_sq." + e.name, moment_dtype, e.shape,
                                 bf16 ? static_cast<const void*>(adam_.v_bf16.data() + e.offset) : adam_.v.data() + e.offset});
  }
  write_safetensors(dir + "/model.safetensors", model_tensors, {{"format", "pt"}});
  write_safetensors(dir + "/optimizer.safetensors", optimizer_tensors);
  const AdamWOptions& a = options_.adamw;
  std::string state = "{\"step\": " + std::to_string(adam_.step) + ", \"adamw\": {\"lr\": " + number(a.lr) +
                      ", \"beta1\": " + number(a.beta1) + ", \"beta2\": " + number(a.beta2) +
                      ", \"eps\": " + number(a.eps) + ", \"weight_decay\": " + number(a.weight_decay) +
                      ", \"max_grad_norm\": " + number(a.max_grad_norm) +
                      ", \"warmup_steps\": " + std::to_string(a.warmup_steps) + ", \"state_dtype\": \"" +
                      optimizer_state_dtype_name(a.state_dtype) + "\"}, \"loss\": {\"icepop_low\": " +
                      number(options_.icepop_low) + ", \"icepop_high\": " + number(options_.icepop_high) +
                      "}, \"matmul_precision\": \"" + matmul_precision_name(options_.matmul_precision) + "\"}\n";
  write_file_atomic(dir + "/trainer_state.json", state.data(), state.size());
}

void Trainer::save_gradients(const std::string& path) const {
  std::vector<TensorToWrite> tensors;
  for (const auto& e : layout_.entries) tensors.push_back({e.name, DType::F32, e.shape, grads_.data() + e.offset});
  write_safetensors(path, tensors, {{"format", "pt"}});
}

void Trainer::load(const std::string& dir) {
  const model::Qwen3Weights weights = model::Qwen3Weights::load(dir);
  const model::Qwen3ParamLayout layout = model::Qwen3ParamLayout::make(weights.config());
  if (layout.total != layout_.total || layout.entries.size() != layout_.entries.size()) {
    throw TrainerError("load: " + dir + " holds a model of another shape");
  }
  const JsonValue state = parse_json(read_text(dir + "/trainer_state.json"));
  const JsonValue* step = state.find("step");
  if (step == nullptr || !step->as_uint64()) throw TrainerError("load: " + dir + "/trainer_state.json has no step");
  // Every moment is checked before anything is replaced, so a refused checkpoint leaves the trainer as it was.
  const std::string optimizer_file = dir + "/optimizer.safetensors";
  const SafetensorsFile opt = SafetensorsFile::open(optimizer_file);
  const OptimizerStateDtype state_dtype = options_.adamw.state_dtype;
  const bool bf16 = state_dtype == OptimizerStateDtype::Bf16;
  const DType moment_dtype = bf16 ? DType::BF16 : DType::F32;
  auto moment_name = [](int which, const std::string& param) { return (which == 0 ? "exp_avg." : "exp_avg_sq.") + param; };
  for (const auto& e : layout_.entries) {
    for (int which = 0; which < 2; which++) {
      const TensorInfo& info = opt.info(moment_name(which, e.name));
      if (info.dtype != moment_dtype) {
        throw TrainerError("load: " + optimizer_file + " holds " + info.name + " as " + dtype_name(info.dtype) +
                           ", but this trainer keeps its optimizer state in " + dtype_name(moment_dtype) +
                           " (optimizer state dtype \"" + optimizer_state_dtype_name(state_dtype) +
                           "\"); open it with the state dtype the checkpoint was saved with");
      }
      if (info.nbytes != e.count * dtype_size(moment_dtype)) {
        throw TrainerError("load: " + optimizer_file + " holds " + info.name + " with the wrong shape");
      }
    }
  }
  params_ = model::qwen3_params_from_weights(weights, layout_);
  zero_grad();
  for (const auto& e : layout_.entries) {
    for (int which = 0; which < 2; which++) {
      const TensorInfo& info = opt.info(moment_name(which, e.name));
      void* target = bf16 ? static_cast<void*>((which == 0 ? adam_.m_bf16 : adam_.v_bf16).data() + e.offset)
                          : static_cast<void*>((which == 0 ? adam_.m : adam_.v).data() + e.offset);
      std::memcpy(target, info.data, info.nbytes);
    }
  }
  adam_.step = int64_t(*step->as_uint64());
}

}  // namespace s3::train
