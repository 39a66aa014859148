// The CPU runner; see cpu_model_runner.h.
#include "engine/cpu_model_runner.h"

#include <numeric>

#include "cpu/matmul.h"

namespace s3::engine {
namespace {

// Logits of every position of one sequence in a scratch cache of `dtype` with one block.
void sequence_logits(const model::Qwen3Weights& weights, const int32_t* tokens, int64_t T, int64_t rope_offset,
                     KvDtype dtype, const int64_t* rows, int64_t num_rows, float* logits, ThreadPool& pool) {
  model::KvCache cache(weights.config(), (T + 15) / 16 * 16, 1, dtype);
  const int32_t table[] = {0};
  const cpu::AttentionSequence sequence{0, T, table, 1};
  model::Qwen3Workspace workspace;
  model::qwen3_forward(weights, {tokens, &sequence, 1, rows, num_rows, &rope_offset}, cache, workspace, logits, pool);
}

}  // namespace

CpuModelRunner::CpuModelRunner(const RunnerOptions& options, std::shared_ptr<const model::Qwen3Weights> weights, ThreadPool& pool)
    : options_(options),
      weights_(weights_in_format(std::move(weights), options.weight_format)),
      pool_(pool),
      cache_(weights_->config(), options.block_size, options.num_blocks, options.kv_dtype) {}

RunnerDescription CpuModelRunner::describe() const {
  return {"cpu", std::string("cpu ") + cpu::matmul_kernels().name, std::string("cpu ") + cpu::attention_kernels().name, "none (cpu)"};
}

void CpuModelRunner::set_weights(std::shared_ptr<const model::Qwen3Weights> weights) {
  weights_ = weights_in_format(std::move(weights), options_.weight_format);
}

void CpuModelRunner::run_batch(const RunnerBatch& batch, cpu::TokenDraw* draws) {
  const int64_t V = weights_->config().vocab_size, R = batch.forward.num_logit_rows;
  logits_.resize(size_t(R * V));
  model::qwen3_forward(*weights_, batch.forward, cache_, workspace_, logits_.data(), pool_);
  pool_.parallel_for(size_t(R), [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; i++) {
      const RunnerSample& s = batch.samples[i];
      cpu::sample_forward(&draws[i * size_t(batch.draw_width)], s.num_draws, &logits_[i * size_t(V)], V, s.temperature,
                          s.seed, s.token_index);
    }
  });
}

std::vector<float> CpuModelRunner::score(const int32_t* tokens, int64_t T) {
  const int64_t V = weights_->config().vocab_size;
  std::vector<int64_t> rows(size_t(T - 1));
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> logits(size_t((T - 1) * V));
  sequence_logits(*weights_, tokens, T, 0, options_.kv_dtype, rows.data(), T - 1, logits.data(), pool_);
  std::vector<float> logprobs(size_t(T - 1));
  for (int64_t i = 0; i < T - 1; i++) logprobs[size_t(i)] = cpu::token_logprob(&logits[size_t(i * V)], V, tokens[i + 1]);
  return logprobs;
}

void CpuModelRunner::logits(const int32_t* tokens, int64_t T, int64_t rope_offset, float* logits) {
  std::vector<int64_t> rows(static_cast<size_t>(T));
  std::iota(rows.begin(), rows.end(), 0);
  sequence_logits(*weights_, tokens, T, rope_offset, KvDtype::F32, rows.data(), T, logits, pool_);
}

}  // namespace s3::engine
