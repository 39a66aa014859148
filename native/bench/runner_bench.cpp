// Timed runner steps; see runner_bench.h.
#include "bench/runner_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/device_peaks.h"
#include "bench/forward_bench.h"

namespace s3::engine {
namespace {

// Whether the runner multiplies in BF16: BF16 weights asked for, or stored ones that are BF16 (FP8
// products have a peak of their own, f32 ones run off the BF16 tensor cores).
bool bf16_products(const model::Qwen3Weights& weights, WeightFormat format) {
  return format == WeightFormat::Bf16 ||
         (format == WeightFormat::Stored && !weights.layers().empty() && weights.layers()[0].q_proj.dtype == DType::BF16);
}

using Clock = std::chrono::steady_clock;

// Median and best of `repetitions` timed calls after one warm-up call.
template <typename Step>
std::pair<double, double> time_steps(int repetitions, const Step& step) {
  step();
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, repetitions); r++) {
    const auto start = Clock::now();
    step();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], seconds.front()};
}

// Block tables of `count` sequences of `blocks` distinct blocks each, from block first·blocks on.
std::vector<std::vector<int32_t>> tables_for(int64_t first, int64_t count, int64_t blocks) {
  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(count));
  for (int64_t s = 0; s < count; s++) {
    for (int64_t b = 0; b < blocks; b++) tables[size_t(s)].push_back(int32_t((first + s) * blocks + b));
  }
  return tables;
}

}  // namespace

double runner_weight_bytes(const model::Qwen3Config& c, WeightFormat format) {
  const double linear = double(c.num_hidden_layers) *
                        (double(c.hidden_size) * double(c.q_dim() + 2 * c.kv_dim()) + double(c.q_dim()) * double(c.hidden_size) +
                         3.0 * double(c.hidden_size) * double(c.intermediate_size));
  const double per_weight = format == WeightFormat::Fp8 ? 1.0 + 4.0 / (128.0 * 128.0) : 2.0;
  return linear * per_weight + 2.0 * double(c.vocab_size) * double(c.hidden_size);
}

RunnerBenchFigures bench_runner_decode(std::shared_ptr<const model::Qwen3Weights> weights, RunnerOptions options,
                                       int64_t sequences, int64_t context, int repetitions, ThreadPool& pool) {
  const model::Qwen3Config c = weights->config();
  const int64_t blocks = (context + 1 + options.block_size - 1) / options.block_size;
  options.num_blocks = sequences * blocks;
  options.max_batch_tokens = std::max<int64_t>(options.max_batch_tokens, sequences);
  options.max_sequences = std::max<int64_t>(options.max_sequences, sequences);
  options.max_context = context + 1;
  std::unique_ptr<ModelRunner> runner = make_model_runner(options, std::move(weights), pool);
  const std::vector<std::vector<int32_t>> tables = tables_for(0, sequences, blocks);
  std::vector<cpu::AttentionSequence> seqs;
  std::vector<int32_t> tokens;
  std::vector<int64_t> rows;
  std::vector<RunnerSample> samples;
  for (int64_t s = 0; s < sequences; s++) {
    seqs.push_back({context, 1, tables[size_t(s)].data(), blocks});
    tokens.push_back(int32_t((s * 7919) % c.vocab_size));
    rows.push_back(s);
    samples.push_back({1.0f, uint64_t(s), uint64_t(context + 1), 1});
  }
  std::vector<cpu::TokenDraw> draws(static_cast<size_t>(sequences));
  const RunnerBatch batch{{tokens.data(), seqs.data(), sequences, rows.data(), sequences}, samples.data(), 1};
  const auto [median, best] = time_steps(repetitions, [&] { runner->run_batch(batch, draws.data()); });
  RunnerBenchFigures f;
  f.sequences = sequences;
  f.tokens = context;
  f.median_seconds = median;
  f.best_seconds = best;
  f.tokens_per_second = double(sequences) / median;
  const double kv_per_position = 2.0 * double(c.num_hidden_layers * c.num_key_value_heads) *
                                 double(c.head_dim * kv_dtype_size(options.kv_dtype) + kv_row_scale_bytes(options.kv_dtype));
  f.bytes_per_step = runner_weight_bytes(c, options.weight_format) + double(sequences) * double(context + 1) * kv_per_position;
  f.runner = runner->describe();
  return f;
}

RunnerBenchFigures bench_runner_prefill(std::shared_ptr<const model::Qwen3Weights> weights, RunnerOptions options,
                                        int64_t sequences, int64_t tokens, int64_t step_tokens, int repetitions, ThreadPool& pool) {
  const model::Qwen3Config c = weights->config();
  const bool bf16 = bf16_products(*weights, options.weight_format);
  const int64_t blocks = (tokens + options.block_size - 1) / options.block_size;
  const int64_t per_step = std::max<int64_t>(1, std::min(sequences, step_tokens / tokens));
  options.num_blocks = sequences * blocks;
  options.max_batch_tokens = per_step * tokens;
  options.max_sequences = std::max<int64_t>(options.max_sequences, per_step);
  options.max_context = tokens;
  std::unique_ptr<ModelRunner> runner = make_model_runner(options, std::move(weights), pool);
  std::vector<int32_t> ids(static_cast<size_t>(per_step * tokens));
  for (size_t i = 0; i < ids.size(); i++) ids[i] = int32_t((i * 104729 + 7) % size_t(c.vocab_size));
  const auto prefill_all = [&] {
    for (int64_t first = 0; first < sequences; first += per_step) {
      const int64_t n = std::min(per_step, sequences - first);
      const std::vector<std::vector<int32_t>> tables = tables_for(first, n, blocks);
      std::vector<cpu::AttentionSequence> seqs;
      std::vector<int64_t> rows;
      std::vector<RunnerSample> samples;
      for (int64_t s = 0; s < n; s++) {
        seqs.push_back({0, tokens, tables[size_t(s)].data(), blocks});
        rows.push_back((s + 1) * tokens - 1);
        samples.push_back({1.0f, uint64_t(s), uint64_t(tokens), 1});
      }
      std::vector<cpu::TokenDraw> draws(static_cast<size_t>(n));
      runner->run_batch({{ids.data(), seqs.data(), n, rows.data(), n}, samples.data(), 1}, draws.data());
    }
  };
  const auto [median, best] = time_steps(repetitions, prefill_all);
  RunnerBenchFigures f;
  f.sequences = sequences;
  f.tokens = tokens;
  f.median_seconds = median;
  f.best_seconds = best;
  f.tokens_per_second = double(sequences * tokens) / median;
  f.flops = model::prefill_flops(c, sequences, tokens);
  const bench::NominalDevicePeak peak = bench::nominal_device_peak(runner->gpu_name());
  f.peak_product = peak.product;
  f.peak_tflops = peak.bf16_tflops;
  if (peak.bf16_tflops > 0 && bf16) f.mfu = f.flops / median / 1e12 / peak.bf16_tflops;
  f.runner = runner->describe();
  return f;
}

}  // namespace s3::engine
