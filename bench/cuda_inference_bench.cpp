// cuda_inference_bench.cpp: the CUDA inference benchmarks of the GPU check (scripts/gpu-check.sh),
// side by side in one run on a random Qwen3-0.6B (bf16 checkpoint from model/qwen3_init.h), through
// the same ModelRunner and Engine the product uses:
//   bandwidth: device-to-device copy (read + write bytes / time), the roofline's denominator;
//   decode:    one step of S sequences with C cached positions each, bf16 weights + bf16 KV and FP8
//              weights + FP8 KV, against the roofline (weight and KV bytes read per step / bandwidth);
//   prefill:   32 × 2,048 tokens (last-token logits), in steps of `prefill_step` tokens, with its
//              FLOPs (bench/forward_bench.h's prefill_flops), TFLOP/s and, for BF16 weights, MFU
//              against the datasheet peak in "devicePeak" (bench/device_peaks.h);
//   decodeGraphs: one decode step of 1, 8, 64 and 256 sequences (1,024 cached positions each, bf16
//              weights and cache, split and tiled attention) launched eagerly and replayed from CUDA
//              graphs (model/qwen3_decode_graphs.h), two alternating rounds each, the better median kept;
//   engine:    256 agents through the engine (history, then one piece each), tokens/s, with eager
//              launches and again with decode graphs.
// Decode and prefill run once per attention implementation (cuda/attention.h: split, tiled,
// tiled-mma), each entry naming it ("attentionKernel" and the runner's "attention" text); the engine
// runs the default one (S3_CUDA_ATTENTION) and names it too. The split prefill is timed once after
// its warm-up (≈ 11 s a pass on an H200), the others as the median of 3. FP8 weights are quantized
// once for every runner that uses them.
// Everything but decodeGraphs and engineWithGraphs launches eagerly (S3_CUDA_GRAPHS is not read).
// JSON: {"copyBandwidthBytesPerSecond", "devicePeak", "decode": [bf16 split, bf16 tiled, bf16 tiled-mma, fp8 split,
//        fp8 tiled, fp8 tiled-mma], "decodeGraphs": [per batch size: split, tiled], "prefill": [the same six],
//        "engine": {..., "attention", "graphs"}, "engineWithGraphs": {the same}}.
// --quick: 32 sequences of 1,024 for decode, 8 × 2,048 prefill, 32 agents; --smoke: the `small`
// shape and a few short sequences, every section once (for the CPU emulation; figures meaningless).
// Built with -DS3_BUILD_GPU_BENCH=ON (CUDA only). Run: s3_cuda_inference_bench [--quick|--smoke] > bench.json
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "bench/device_peaks.h"
#include "bench/forward_bench.h"
#include "core/thread_pool.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "engine/engine.h"
#include "engine/model_runner.h"
#include "gpu_bench_support.h"
#include "bench/runner_bench.h"
#include "model/qwen3_weights.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

using s3::engine::CudaAttention;
using s3::engine::CudaGraphs;

s3::engine::RunnerOptions cuda_options(bool fp8, CudaAttention attention, CudaGraphs graphs = CudaGraphs::Off) {
  s3::engine::RunnerOptions options;
  options.cuda_graphs = graphs;
  options.device = s3::model::Device::Cuda;
  options.kv_dtype = fp8 ? s3::KvDtype::Fp8E4M3 : s3::KvDtype::Bf16;
  options.weight_format = fp8 ? s3::engine::WeightFormat::Fp8 : s3::engine::WeightFormat::Stored;
  options.cuda_attention = attention;
  return options;
}

constexpr CudaAttention kAttentions[] = {CudaAttention::Split, CudaAttention::Tiled, CudaAttention::TiledMma};

const char* attention_kernel(CudaAttention attention) {
  switch (attention) {
    case CudaAttention::Tiled: return "tiled";
    case CudaAttention::TiledMma: return "tiled-mma";
    default: return "split";
  }
}

std::string decode_figures(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, bool fp8, CudaAttention attention,
                           int64_t S, int64_t C, double bandwidth, s3::ThreadPool& pool) {
  const s3::engine::RunnerBenchFigures f = s3::engine::bench_runner_decode(weights, cuda_options(fp8, attention), S, C, 10, pool);
  const double roofline = double(S) / (f.bytes_per_step / bandwidth);
  char text[1024];
  std::snprintf(text, sizeof text,
                "{\"weights\": \"%s\", \"kvCache\": \"%s\", \"sequences\": %lld, \"context\": %lld, \"stepSeconds\": %.6f, "
                "\"tokensPerSecond\": %.1f, \"bytesPerStep\": %.0f, \"rooflineTokensPerSecond\": %.1f, \"fractionOfRoofline\": %.3f, "
                "\"gemm\": \"%s\", \"attentionKernel\": \"%s\", \"attention\": \"%s\"}",
                fp8 ? "fp8" : "bf16", fp8 ? "fp8" : "bf16", (long long)S, (long long)C, f.median_seconds, f.tokens_per_second,
                f.bytes_per_step, roofline, f.tokens_per_second / roofline, f.runner.gemm.c_str(), attention_kernel(attention),
                f.runner.attention.c_str());
  return text;
}

// One decode step of S sequences eagerly and from graphs, alternating twice; the better median of each.
std::string decode_graph_figures(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, CudaAttention attention, int64_t S,
                                 int64_t C, s3::ThreadPool& pool) {
  double eager = 1e30, graphed = 1e30;
  std::string graphs;
  for (int round = 0; round < 2; round++) {
    for (const CudaGraphs mode : {CudaGraphs::Off, CudaGraphs::On}) {
      const s3::engine::RunnerBenchFigures f =
          s3::engine::bench_runner_decode(weights, cuda_options(false, attention, mode), S, C, 20, pool);
      (mode == CudaGraphs::Off ? eager : graphed) = std::min(mode == CudaGraphs::Off ? eager : graphed, f.median_seconds);
      if (mode == CudaGraphs::On) graphs = f.runner.graphs;
    }
  }
  char text[1024];
  std::snprintf(text, sizeof text,
                "{\"sequences\": %lld, \"context\": %lld, \"attentionKernel\": \"%s\", \"eagerStepSeconds\": %.6f, "
                "\"graphStepSeconds\": %.6f, \"graphSpeedup\": %.3f, \"graphs\": \"%s\"}",
                (long long)S, (long long)C, attention_kernel(attention), eager, graphed, eager / graphed, graphs.c_str());
  return text;
}

// peak_tflops: the GPU's datasheet dense BF16 peak (0: not known); "mfu" is reported for BF16
// weights only (FP8 products have a peak of their own, and may run widened to BF16).
std::string prefill_figures(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, bool fp8, CudaAttention attention,
                            int64_t S, int64_t L, int64_t step_tokens, double peak_tflops, s3::ThreadPool& pool) {
  const int repetitions = attention == CudaAttention::Split ? 1 : 3;
  const s3::engine::RunnerBenchFigures f =
      s3::engine::bench_runner_prefill(weights, cuda_options(fp8, attention), S, L, step_tokens, repetitions, pool);
  const double flops = s3::model::prefill_flops(weights->config(), S, L);
  const double tflops = flops / f.median_seconds / 1e12;
  char mfu[32] = "null";
  if (!fp8 && peak_tflops > 0) std::snprintf(mfu, sizeof mfu, "%.4f", tflops / peak_tflops);
  char text[1280];
  std::snprintf(text, sizeof text,
                "{\"weights\": \"%s\", \"kvCache\": \"%s\", \"sequences\": %lld, \"tokens\": %lld, \"stepTokens\": %lld, "
                "\"seconds\": %.4f, \"tokensPerSecond\": %.0f, \"flops\": %.6g, \"tflops\": %.2f, \"mfu\": %s, \"repetitions\": %d, "
                "\"gemm\": \"%s\", \"attentionKernel\": \"%s\", \"attention\": \"%s\"}",
                fp8 ? "fp8" : "bf16", fp8 ? "fp8" : "bf16", (long long)S, (long long)L, (long long)step_tokens, f.median_seconds,
                f.tokens_per_second, flops, tflops, mfu, repetitions, f.runner.gemm.c_str(), attention_kernel(attention),
                f.runner.attention.c_str());
  return text;
}

std::string engine_figures(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, int64_t agents, int64_t history,
                           int64_t piece, CudaGraphs graphs, s3::ThreadPool& pool) {
  std::mutex mutex;
  std::condition_variable done;
  int64_t finished = 0, generated = 0;
  s3::engine::EngineOptions options;
  options.device = s3::model::Device::Cuda;
  options.kv_dtype = s3::KvDtype::Bf16;
  options.num_blocks = agents * ((history + piece + 16) / 16 + 1);
  options.limits.max_sequences = agents;
  options.limits.max_batch_tokens = 8192;
  options.cuda_graphs = graphs;
  s3::engine::Engine engine(weights, options, [&](s3::engine::EngineTurn&& turn) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const s3::engine::EngineResult& r : turn.results) {
      finished++;
      generated += int64_t(r.tokens.size());
    }
    done.notify_all();
  }, pool);
  const int64_t V = weights->config().vocab_size;
  const auto start = Clock::now();
  for (int64_t a = 0; a < agents; a++) {
    const uint64_t s = engine.open_sequence();
    std::vector<int32_t> tokens(static_cast<size_t>(history));
    for (int64_t i = 0; i < history; i++) tokens[size_t(i)] = int32_t((a * 31 + i * 7) % V);
    engine.append(s, tokens.data(), history);
    engine.generate(s, {piece, {}, 1.0f, uint64_t(a), 0});
  }
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finished == agents; });
  const double wall = seconds_since(start);
  const s3::engine::EngineStats stats = engine.stats();
  char text[768];
  std::snprintf(text, sizeof text,
                "{\"agents\": %lld, \"history\": %lld, \"piece\": %lld, \"wallSeconds\": %.3f, \"generatedTokens\": %lld, "
                "\"tokensPerSecond\": %.1f, \"steps\": %lld, \"busySeconds\": %.3f, \"attention\": \"%s\", \"graphs\": \"%s\"}",
                (long long)agents, (long long)history, (long long)piece, wall, (long long)generated, double(generated) / wall,
                (long long)stats.steps, stats.busy_seconds, engine.description().attention.c_str(), engine.description().graphs.c_str());
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const s3bench::BenchSize size = s3bench::bench_size(argc, argv, "s3_cuda_inference_bench");
  const bool quick = size == s3bench::BenchSize::Quick, smoke = size == s3bench::BenchSize::Smoke;
  s3::ThreadPool pool(8);
  double bandwidth = 0;
  try {
    bandwidth = s3::cuda::copy_bandwidth();
  } catch (const std::exception& e) {
    std::printf("{\"error\": \"no device: %s\"}\n", e.what());
    return 1;
  }
  const auto weights = std::make_shared<const s3::model::Qwen3Weights>(s3::model::Qwen3Weights::load(s3bench::bench_checkpoint(size)));
  const auto fp8_weights = s3::engine::weights_in_format(weights, s3::engine::WeightFormat::Fp8);
  const auto weights_for = [&](bool fp8) { return fp8 ? fp8_weights : weights; };
  // Decode: S sequences of C positions; prefill: P sequences of L tokens in steps of `step`.
  const int64_t S = smoke ? 4 : quick ? 32 : 256, C = smoke ? 40 : quick ? 1024 : 4096;
  const int64_t P = smoke ? 2 : quick ? 8 : 32, L = smoke ? 80 : 2048, step = smoke ? 96 : 8192;
  const std::vector<int64_t> graph_sequences = smoke ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{1, 8, 64, quick ? 32 : 256};
  const int64_t graph_context = smoke ? 40 : quick ? 256 : 1024;
  const int64_t agents = smoke ? 4 : quick ? 32 : 256, history = smoke ? 24 : 512, piece = smoke ? 6 : quick ? 64 : 256;
  const std::string gpu = s3::cuda::first_device().name;
  const s3::bench::NominalDevicePeak peak = s3::bench::nominal_device_peak(gpu);
  std::printf("{\"copyBandwidthBytesPerSecond\": %.4g,\n", bandwidth);
  std::printf(" \"devicePeak\": %s,\n", s3bench::device_peak_json(gpu).c_str());
  std::fflush(stdout);
  const char* separator = " \"decode\": [";
  for (bool fp8 : {false, true}) {
    for (CudaAttention attention : kAttentions) {
      std::printf("%s%s", separator,
                  s3bench::guarded([&] { return decode_figures(weights_for(fp8), fp8, attention, S, C, bandwidth, pool); }).c_str());
      std::fflush(stdout);
      separator = ",\n            ";
    }
  }
  separator = "],\n \"decodeGraphs\": [";
  for (const int64_t sequences : graph_sequences) {
    for (const CudaAttention attention : {CudaAttention::Split, CudaAttention::Tiled}) {
      std::printf("%s%s", separator,
                  s3bench::guarded([&] { return decode_graph_figures(weights, attention, sequences, graph_context, pool); }).c_str());
      std::fflush(stdout);
      separator = ",\n                  ";
    }
  }
  separator = "],\n \"prefill\": [";
  for (bool fp8 : {false, true}) {
    for (CudaAttention attention : kAttentions) {
      std::printf("%s%s", separator,
                  s3bench::guarded([&] { return prefill_figures(weights_for(fp8), fp8, attention, P, L, step, peak.bf16_tflops, pool); }).c_str());
      std::fflush(stdout);
      separator = ",\n             ";
    }
  }
  std::printf("],\n");
  for (const CudaGraphs graphs : {CudaGraphs::Off, CudaGraphs::On}) {
    std::printf(" \"%s\": %s%s\n", graphs == CudaGraphs::Off ? "engine" : "engineWithGraphs",
                s3bench::guarded([&] { return engine_figures(weights, agents, history, piece, graphs, pool); }).c_str(),
                graphs == CudaGraphs::Off ? "," : "}");
    std::fflush(stdout);
  }
  return 0;
}
