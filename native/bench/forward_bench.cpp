// Timed forward-pass runs; see forward_bench.h.
#include "bench/forward_bench.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "model/kv_cache.h"
#include "model/qwen3_forward.h"

namespace s3::model {
namespace {

constexpr int64_t kBlockSize = 256;

int64_t matrix_bytes(const cpu::MatrixView& m) { return m.rows * m.cols * int64_t(dtype_size(m.dtype)); }

// Weight bytes the pass streams per step (every layer's matrices and the LM head).
int64_t weight_bytes(const Qwen3Weights& weights) {
  int64_t bytes = matrix_bytes(weights.lm_head());
  for (const Qwen3LayerWeights& layer : weights.layers()) {
    for (const cpu::MatrixView* m : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.gate_proj,
                                     &layer.up_proj, &layer.down_proj}) {
      bytes += matrix_bytes(*m);
    }
  }
  return bytes;
}

// Multiply-adds × 2 of the linear layers for `tokens` tokens, attention for queries at the given
// positions (each reads position+1 keys), and the LM head for `logit_rows` rows.
double pass_flops(const Qwen3Config& c, int64_t tokens, double attended_keys, int64_t logit_rows) {
  const double per_token = double(c.hidden_size) * double(c.q_dim() * 2 + c.kv_dim() * 2) +
                           3.0 * double(c.hidden_size) * double(c.intermediate_size);
  const double attention = 2.0 * attended_keys * double(c.q_dim());  // q·k and p·v
  return 2.0 * double(c.num_hidden_layers) * (per_token * double(tokens) + attention) +
         2.0 * double(logit_rows) * double(c.hidden_size) * double(c.vocab_size);
}

}  // namespace

double prefill_flops(const Qwen3Config& c, int64_t sequences, int64_t tokens) {
  const double attended = double(sequences) * double(tokens) * double(tokens + 1) / 2.0;
  return pass_flops(c, sequences * tokens, attended, sequences);
}

namespace {

template <typename Step>
void time_steps(int repetitions, BenchFigures& figures, Step step) {
  std::vector<double> seconds;
  step();  // warm-up: touches the weights and sizes the workspace
  for (int r = 0; r < std::max(1, repetitions); r++) {
    const auto start = std::chrono::steady_clock::now();
    step();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  figures.best_seconds = seconds.front();
  figures.median_seconds = seconds[seconds.size() / 2];
}

}  // namespace

BenchFigures bench_prefill(const Qwen3Weights& weights, int64_t sequences, int64_t tokens, int repetitions, ThreadPool& pool,
                           KvDtype kv_dtype) {
  const Qwen3Config& c = weights.config();
  const int64_t blocks_per_sequence = (tokens + kBlockSize - 1) / kBlockSize;
  KvCache cache(c, kBlockSize, sequences * blocks_per_sequence, kv_dtype);
  std::vector<int32_t> table(static_cast<size_t>(sequences * blocks_per_sequence));
  std::iota(table.begin(), table.end(), 0);
  std::vector<cpu::AttentionSequence> seqs(static_cast<size_t>(sequences));
  std::vector<int64_t> rows(static_cast<size_t>(sequences));
  for (int64_t b = 0; b < sequences; b++) {
    seqs[size_t(b)] = {0, tokens, &table[size_t(b * blocks_per_sequence)], blocks_per_sequence};
    rows[size_t(b)] = (b + 1) * tokens - 1;
  }
  std::mt19937 rng(1);
  std::vector<int32_t> ids(static_cast<size_t>(sequences * tokens));
  for (int32_t& id : ids) id = int32_t(rng() % uint32_t(c.vocab_size));
  std::vector<float> logits(static_cast<size_t>(sequences * c.vocab_size));
  Qwen3Workspace workspace;
  const Qwen3Batch batch{ids.data(), seqs.data(), sequences, rows.data(), sequences};

  BenchFigures figures;
  figures.sequences = sequences;
  figures.tokens_per_step = sequences * tokens;
  time_steps(repetitions, figures, [&] { qwen3_forward(weights, batch, cache, workspace, logits.data(), pool); });
  figures.tokens_per_second = double(figures.tokens_per_step) / figures.median_seconds;
  figures.gflops = prefill_flops(c, sequences, tokens) / figures.median_seconds / 1e9;
  figures.weight_gbytes_per_second = double(weight_bytes(weights)) / figures.median_seconds / 1e9;
  const double bytes_per_position = double(KvCache::bytes_per_block(c, kBlockSize, cache.dtype())) / double(kBlockSize);
  figures.kv_gbytes = double(sequences) * double(tokens) * bytes_per_position / 1e9;
  return figures;
}

BenchFigures bench_decode(const Qwen3Weights& weights, int64_t sequences, int64_t context, int repetitions, ThreadPool& pool,
                          KvDtype kv_dtype) {
  const Qwen3Config& c = weights.config();
  const int64_t blocks_per_sequence = (context + 1 + kBlockSize - 1) / kBlockSize;
  KvCache cache(c, kBlockSize, sequences * blocks_per_sequence, kv_dtype);
  std::vector<int32_t> table(static_cast<size_t>(sequences * blocks_per_sequence));
  std::iota(table.begin(), table.end(), 0);

  // Fill positions [0, context) of every sequence with random keys and values, layer by layer.
  std::vector<cpu::AttentionSequence> fill(static_cast<size_t>(sequences));
  for (int64_t b = 0; b < sequences; b++) fill[size_t(b)] = {0, context, &table[size_t(b * blocks_per_sequence)], blocks_per_sequence};
  std::vector<float> k(size_t(sequences * context * c.kv_dim())), v(k.size());
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  for (int64_t layer = 0; layer < c.num_hidden_layers; layer++) cache.store(layer, fill.data(), sequences, k.data(), v.data());
  k.clear();
  k.shrink_to_fit();
  v.clear();
  v.shrink_to_fit();

  std::vector<cpu::AttentionSequence> step(static_cast<size_t>(sequences));
  std::vector<int64_t> rows(static_cast<size_t>(sequences));
  std::vector<int32_t> ids(static_cast<size_t>(sequences));
  for (int64_t b = 0; b < sequences; b++) {
    step[size_t(b)] = {context, 1, &table[size_t(b * blocks_per_sequence)], blocks_per_sequence};
    rows[size_t(b)] = b;
    ids[size_t(b)] = int32_t(rng() % uint32_t(c.vocab_size));
  }
  std::vector<float> logits(static_cast<size_t>(sequences * c.vocab_size));
  Qwen3Workspace workspace;
  const Qwen3Batch batch{ids.data(), step.data(), sequences, rows.data(), sequences};

  BenchFigures figures;
  figures.sequences = sequences;
  figures.tokens_per_step = sequences;
  // Every step rewrites position `context`, so repeated steps read the same cache.
  time_steps(repetitions, figures, [&] { qwen3_forward(weights, batch, cache, workspace, logits.data(), pool); });
  figures.tokens_per_second = double(sequences) / figures.median_seconds;
  figures.gflops = pass_flops(c, sequences, double(sequences) * double(context + 1), sequences) / figures.median_seconds / 1e9;
  figures.weight_gbytes_per_second = double(weight_bytes(weights)) / figures.median_seconds / 1e9;
  const double bytes_per_position = double(KvCache::bytes_per_block(c, kBlockSize, kv_dtype)) / double(kBlockSize);
  figures.kv_gbytes = double(sequences) * double(context) * bytes_per_position / 1e9;
  return figures;
}

}  // namespace s3::model
