// runner_bench.h: timed steps of a model runner (model_runner.h) on any device, for `swarm bench
// decode|forward --device cuda` and the GPU check's benchmark: a decode step of S sequences with C
// cached positions each, and a prefill of S sequences of L tokens in steps of at most `step_tokens`
// (last-token logits, as the engine asks). The cache is not filled first: a step's cost does not
// depend on the cached values. Each figure is the median of the timed repetitions after a warm-up.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "engine/model_runner.h"

namespace s3::engine {

struct RunnerBenchFigures {
  int64_t sequences = 0;
  int64_t tokens = 0;           // per sequence: context (decode) or prompt length (prefill)
  double median_seconds = 0;    // per decode step, or per whole prefill
  double best_seconds = 0;
  double tokens_per_second = 0;
  double bytes_per_step = 0;    // decode: weight and KV bytes one step reads
  double flops = 0;             // prefill: model FLOPs of the whole prefill (bench/forward_bench.h's prefill_flops)
  // Prefill on a GPU: the datasheet dense BF16 peak of the GPU (bench/device_peaks.h; product "" and
  // 0 TFLOP/s where it is not known) and, where the runner's products are BF16, the model FLOPs
  // utilisation against it (flops / median_seconds over the peak); mfu < 0 otherwise.
  std::string peak_product;
  double peak_tflops = 0;
  double mfu = -1;
  RunnerDescription runner;
};

// Bytes of weights one forward step reads: every layer's matrices in the runner's form (bf16 or
// FP8 with its block scales) and a bf16 LM head.
double runner_weight_bytes(const model::Qwen3Config& config, WeightFormat format);

// `options` gives the device, weight format and KV dtype; blocks and batch limits are set here.
RunnerBenchFigures bench_runner_decode(std::shared_ptr<const model::Qwen3Weights> weights, RunnerOptions options,
                                       int64_t sequences, int64_t context, int repetitions, ThreadPool& pool);
RunnerBenchFigures bench_runner_prefill(std::shared_ptr<const model::Qwen3Weights> weights, RunnerOptions options,
                                        int64_t sequences, int64_t tokens, int64_t step_tokens, int repetitions, ThreadPool& pool);

}  // namespace s3::engine
