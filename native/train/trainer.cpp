// trainer.cpp: the implementation of train/trainer.h (see the header for the contract and layouts).
#include "train/trainer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/huge_pages.h"
#include "core/json.h"
#include "core/safetensors.h"
#include "train/gradient_buckets.h"
#include "train/train_rows.h"

namespace s3::train {

namespace {

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
  TrainerComputeOptions compute;
  compute.matmul_precision = options_.matmul_precision;
  compute.state_dtype = options_.adamw.state_dtype;
  compute.threads = options_.threads;
  compute.activation_bytes = options_.activation_bytes;
  try {
    compute_ = make_trainer_compute(options_.device, config_, layout_, model::qwen3_params_from_weights(weights, layout_), compute);
  } catch (const std::runtime_error& e) {
    throw TrainerError(e.what());
  }
}

StepDiagnostics Trainer::accumulate(const TrainBatch& b) { return accumulate_summing(b, nullptr); }

StepDiagnostics Trainer::accumulate_and_sum(const TrainBatch& b, Collective& group) { return accumulate_summing(b, &group); }

StepDiagnostics Trainer::accumulate_summing(const TrainBatch& b, Collective* group) {
  const TrainRows rows = prepare_train_rows(b, config_.vocab_size, options_.shared_prefix_min_tokens);
  const LossOptions lo =
      train_loss_options(b, options_.icepop_low, options_.icepop_high, options_.loss_chunk_rows, options_.matmul_precision);
  std::unique_ptr<OverlappedGradientSum> sum;
  if (group != nullptr) sum = std::make_unique<OverlappedGradientSum>(*group, *compute_, layout_);
  LossStats stats;
  try {
    stats = compute_->accumulate(rows, lo, sum == nullptr ? std::function<void(int64_t)>() : [&](int64_t layer) { sum->layer_done(layer); });
    if (sum != nullptr) sum->finish();
  } catch (const std::invalid_argument& e) {
    throw TrainerError(std::string("accumulate: ") + e.what());
  } catch (const CollectiveError& e) {
    throw TrainerError(std::string("accumulate_and_sum: ") + e.what());
  }
  return step_diagnostics(stats, b, rows.shared_rows);
}

AdamWStepResult Trainer::step() { return compute_->step(options_.adamw); }

void Trainer::zero_grad() { compute_->zero_grad(); }

void Trainer::all_reduce_gradients(Collective& group) {
  try {
    for (const GradientBucket& bucket : gradient_buckets(layout_)) {
      for (const GradientRange& range : bucket.ranges) compute_->all_reduce_gradient_range(group, range.offset, range.count);
    }
  } catch (const CollectiveError& e) {
    throw TrainerError(std::string("all_reduce_gradients: ") + e.what());
  }
}

uint64_t Trainer::parameter_fingerprint() const {
  const std::vector<float>& values = params();
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a offset basis, folded over 32-bit words
  for (const float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    hash = (hash ^ bits) * 0x100000001b3ULL;
  }
  return hash;
}

void Trainer::set_params(const std::vector<float>& values) {
  if (values.size() != layout_.total) {
    throw TrainerError("set_params: " + std::to_string(values.size()) + " values for " + std::to_string(layout_.total) +
                       " parameters");
  }
  compute_->set_params(values.data());
}

model::Qwen3Weights Trainer::weights() const {
  return model::Qwen3Weights::from_tensors(config_, model::qwen3_param_tensors(layout_, params().data()),
                                           model::Qwen3Weights::Storage::Copy, "trainer weights");
}

void Trainer::save_model(const std::string& dir, const std::string& run_config_json) const {
  make_dirs(dir);
  if (!run_config_json.empty()) {
    parse_json(run_config_json);  // refuse what is not JSON before writing anything
    write_file_atomic(dir + "/run_config.json", run_config_json.data(), run_config_json.size());
  }
  write_file_atomic(dir + "/config.json", config_json_.data(), config_json_.size());
  const std::vector<float>& values = params();
  std::vector<TensorToWrite> model_tensors;
  for (const auto& e : layout_.entries) model_tensors.push_back({e.name, DType::F32, e.shape, values.data() + e.offset});
  write_safetensors(dir + "/model.safetensors", model_tensors, {{"format", "pt"}});
}

void Trainer::save(const std::string& dir, const std::string& run_config_json) const {
  save_model(dir, run_config_json);
  const bool bf16 = options_.adamw.state_dtype == OptimizerStateDtype::Bf16;
  const DType moment_dtype = bf16 ? DType::BF16 : DType::F32;
  const AdamWState& moments = compute_->optimizer_state();
  std::vector<TensorToWrite> optimizer_tensors;
  for (const auto& e : layout_.entries) {
    optimizer_tensors.push_back({"exp_avg." + e.name, moment_dtype, e.shape,
                                 bf16 ? static_cast<const void*>(moments.m_bf16.data() + e.offset) : moments.m.data() + e.offset});
    optimizer_tensors.push_back({"exp_avg_sq." + e.name, moment_dtype, e.shape,
                                 bf16 ? static_cast<const void*>(moments.v_bf16.data() + e.offset) : moments.v.data() + e.offset});
  }
  write_safetensors(dir + "/optimizer.safetensors", optimizer_tensors);
  const AdamWOptions& a = options_.adamw;
  std::string state = "{\"step\": " + std::to_string(compute_->step_count()) + ", \"adamw\": {\"lr\": " + json_number(a.lr) +
                      ", \"beta1\": " + json_number(a.beta1) + ", \"beta2\": " + json_number(a.beta2) +
                      ", \"eps\": " + json_number(a.eps) + ", \"weight_decay\": " + json_number(a.weight_decay) +
                      ", \"max_grad_norm\": " + json_number(a.max_grad_norm) +
                      ", \"warmup_steps\": " + std::to_string(a.warmup_steps) + ", \"state_dtype\": \"" +
                      optimizer_state_dtype_name(a.state_dtype) + "\"}, \"loss\": {\"icepop_low\": " +
                      json_number(options_.icepop_low) + ", \"icepop_high\": " + json_number(options_.icepop_high) +
                      "}, \"matmul_precision\": \"" + matmul_precision_name(options_.matmul_precision) + "\"}\n";
  write_file_atomic(dir + "/trainer_state.json", state.data(), state.size());
}

void Trainer::save_gradients(const std::string& path) const {
  const std::vector<float>& gradients = grads();
  std::vector<TensorToWrite> tensors;
  for (const auto& e : layout_.entries) tensors.push_back({e.name, DType::F32, e.shape, gradients.data() + e.offset});
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
  AdamWState restored;
  if (bf16) {
    assign_on_huge_pages(restored.m_bf16, layout_.total, uint16_t(0));
    assign_on_huge_pages(restored.v_bf16, layout_.total, uint16_t(0));
  } else {
    assign_on_huge_pages(restored.m, layout_.total, 0.0f);
    assign_on_huge_pages(restored.v, layout_.total, 0.0f);
  }
  for (const auto& e : layout_.entries) {
    for (int which = 0; which < 2; which++) {
      const TensorInfo& info = opt.info(moment_name(which, e.name));
      void* target = bf16 ? static_cast<void*>((which == 0 ? restored.m_bf16 : restored.v_bf16).data() + e.offset)
                          : static_cast<void*>((which == 0 ? restored.m : restored.v).data() + e.offset);
      std::memcpy(target, info.data, info.nbytes);
    }
  }
  restored.step = int64_t(*step->as_uint64());
  compute_->set_state(model::qwen3_params_from_weights(weights, layout_), std::move(restored));
}

}  // namespace s3::train
