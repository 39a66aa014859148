// Timed training steps; see train_bench.h.
#include "bench/train_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/device_peaks.h"

namespace s3::model {
namespace {

// Resets the process's RSS high-water mark (Linux ≥ 4.0: writing 5 to clear_refs), so the peak
// reported is the training's, not the checkpoint load's. Returns false where that is refused.
bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// VmHWM from /proc/self/status, else getrusage's ru_maxrss (the peak since the process started).
double peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return double(std::stoll(line.substr(6))) * 1024.0;
  }
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) * 1024.0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// std::invalid_argument for options that do not make a batch.
void check_batch(const TrainBenchOptions& o) {
  if (o.tokens < 2 || o.sequences < 1 || o.tokens % o.sequences != 0 || o.tokens / o.sequences < 2) {
    throw std::invalid_argument("bench_train: " + std::to_string(o.tokens) + " tokens do not split into " +
                                std::to_string(o.sequences) + " sequences of at least 2 tokens each");
  }
  if (o.micro_batches < 1) {
    throw std::invalid_argument("bench_train: micro_batches must be at least 1, got " + std::to_string(o.micro_batches));
  }
}

}  // namespace

double train_flops_per_token(const Qwen3Config& c, int64_t T) {
  const double C = double(c.hidden_size), I = double(c.intermediate_size);
  const double layer_params = C * double(c.q_dim() + 2 * c.kv_dim()) + double(c.q_dim()) * C + 3.0 * C * I;
  const double matmul_params = double(c.num_hidden_layers) * layer_params + double(c.vocab_size) * C;
  const double attention = 12.0 * double(c.num_hidden_layers) * double(T) * double(c.q_dim()) / 2.0;
  return 6.0 * matmul_params + attention;
}

train::TrainerOptions train_bench_trainer_options(const TrainBenchOptions& o) {
  train::TrainerOptions options;
  options.device = o.device;
  options.matmul_precision = o.matmul_precision;
  options.threads = o.threads;
  options.activation_bytes = o.activation_bytes;
  options.adamw.state_dtype = o.optimizer_state;
  options.adamw.lr = 1e-6;  // small: repeated steps on one batch stay near the initial weights
  return options;
}

TrainBenchFigures bench_train(const std::string& checkpoint_dir, const TrainBenchOptions& o) {
  check_batch(o);
  if (o.on_phase) o.on_phase("building the trainer");
  train::Trainer trainer(checkpoint_dir, train_bench_trainer_options(o));
  return bench_train(trainer, o);
}

TrainBenchFigures bench_train(train::Trainer& trainer, const TrainBenchOptions& o) {
  check_batch(o);
  const auto phase = [&](const std::string& name) {
    if (o.on_phase) o.on_phase(name);
  };
  const Qwen3Config& c = trainer.config();
  const int64_t length = o.tokens / o.sequences;
  // Each micro-batch its own tokens (one generator, drawn in order); every token's coefficient
  // 1 / (the step's tokens), so the accumulated loss is the mean over the step.
  std::mt19937 rng(1);
  std::vector<train::TrainBatch> batches(size_t(o.micro_batches));
  for (train::TrainBatch& batch : batches) {
    batch.kind = train::LossKind::Sft;
    batch.tokens.resize(size_t(o.tokens));
    for (int32_t& id : batch.tokens) id = int32_t(rng() % uint32_t(c.vocab_size));
    batch.coef.assign(size_t(o.tokens), 1.0f / float(o.tokens * o.micro_batches));
    batch.seq_lengths.assign(size_t(o.sequences), length);
    for (int64_t s = 1; s <= o.sequences; s++) batch.coef[size_t(s * length - 1)] = 0.0f;  // no next token
  }

  reset_peak_rss();
  TrainBenchFigures figures;
  figures.tokens = o.tokens * o.micro_batches;
  figures.sequences = o.sequences;
  figures.micro_batches = o.micro_batches;
  figures.device = trainer.device_description();
  std::vector<double> total, forward_backward, optimizer;
  const int repetitions = std::max(1, o.repetitions);
  const int steps = repetitions + (o.warm_up ? 1 : 0);
  for (int r = 0; r < steps; r++) {
    const bool warm_up = o.warm_up && r == 0;
    const std::string step = warm_up ? "warm-up step" : "step " + std::to_string(r + (o.warm_up ? 0 : 1)) + " of " +
                                                            std::to_string(repetitions);
    phase(step + ": forward + backward");
    const auto start = std::chrono::steady_clock::now();
    figures.loss = 0;
    for (const train::TrainBatch& batch : batches) figures.loss += trainer.accumulate(batch).loss;
    const double fb = seconds_since(start);
    phase(step + ": AdamW");
    const auto step_start = std::chrono::steady_clock::now();
    trainer.step();
    const double opt = seconds_since(step_start);
    if (warm_up) {
      figures.warm_up_seconds = fb + opt;
      continue;
    }
    forward_backward.push_back(fb);
    optimizer.push_back(opt);
    total.push_back(fb + opt);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  figures.best_seconds = *std::min_element(total.begin(), total.end());
  figures.median_seconds = median(total);
  figures.forward_backward_seconds = median(forward_backward);
  figures.optimizer_seconds = median(optimizer);
  figures.tokens_per_second = double(figures.tokens) / figures.median_seconds;
  figures.flops_per_token = train_flops_per_token(c, length);
  figures.gflops = figures.tokens_per_second * figures.flops_per_token / 1e9;
  figures.peak_rss_bytes = peak_rss_bytes();
  figures.activations_kept = trainer.kept_activations();
  const bench::NominalDevicePeak peak = bench::nominal_device_peak(trainer.gpu_name());
  figures.peak_product = peak.product;
  figures.peak_tflops = peak.bf16_tflops;
  if (peak.bf16_tflops > 0 && trainer.options().matmul_precision == MatmulPrecision::Bf16) {
    figures.mfu = figures.gflops / (1e3 * peak.bf16_tflops);
  }
  return figures;
}

}  // namespace s3::model
