// forward_bench.h: timed runs of the Qwen3 forward pass for `swarm bench forward|decode`. Each
// figure is the best and the median of several repetitions; FLOP counts are the matmul and
// attention work the pass does (2 per multiply-add), so they compare with the FMA peak.
#pragma once
#include <cstdint>

#include "core/kv_dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "model/qwen3_weights.h"

namespace s3::model {

struct BenchFigures {
  int64_t sequences = 0;
  int64_t tokens_per_step = 0;   // tokens computed per timed step (all sequences)
  double best_seconds = 0;       // per step
  double median_seconds = 0;     // per step
  double tokens_per_second = 0;  // from the median
  double gflops = 0;             // from the median
  double weight_gbytes_per_second = 0;  // weight bytes read per step / median time
  double kv_gbytes = 0;          // bytes of KV cache a decode step reads, or a prefill writes (fp8: row scales included)
};

// FLOPs of a prefill of `sequences` × `tokens` new tokens from empty caches with logits of each
// sequence's last token: the matmuls (2 per multiply-add), causal attention (query i reads i + 1
// keys) and the LM head; what bench_prefill's gflops and the GPU prefill benchmark's MFU count.
double prefill_flops(const Qwen3Config& config, int64_t sequences, int64_t tokens);

// Prefill of `sequences` × `tokens` new tokens in one batch from an empty cache of `kv_dtype`
// elements (the engine's f32, bf16 or fp8 with row scales); logits of each sequence's last token.
BenchFigures bench_prefill(const Qwen3Weights& weights, int64_t sequences, int64_t tokens, int repetitions, ThreadPool& pool,
                           KvDtype kv_dtype = KvDtype::F32);

// One decode step (one new token per sequence) for `sequences` sequences whose caches already
// hold `context` positions. The cache is filled with random keys and values directly (prefilling
// it would dominate the run and the step's cost does not depend on the values).
// `kv_dtype` is the cache's element type (f32, bf16, or fp8 with row scales), as the engine's.
BenchFigures bench_decode(const Qwen3Weights& weights, int64_t sequences, int64_t context, int repetitions, ThreadPool& pool,
                          KvDtype kv_dtype = KvDtype::F32);

}  // namespace s3::model
