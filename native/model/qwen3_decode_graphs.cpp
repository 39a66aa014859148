// Decode steps replayed from CUDA graphs; see qwen3_decode_graphs.h.
#include "model/qwen3_decode_graphs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/check.h"
#include "model/qwen3_step_bookkeeping.h"

namespace s3::model {
namespace {

// The widest output of the FP8 matrices among `weights` (0 without any): the bf16-output FP8 forms
// write it to the Gemm's scratch.
int64_t widest_fp8_output(const Qwen3DeviceWeights& weights) {
  int64_t widest = 0;
  const auto consider = [&](const cuda::DeviceMatrix& m) {
    if (m.dtype == cuda::GemmDtype::Fp8) widest = std::max(widest, m.rows);
  };
  consider(weights.lm_head());
  for (const Qwen3DeviceLayer& layer : weights.layers()) {
    for (const cuda::DeviceMatrix* m : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.gate_proj, &layer.up_proj,
                                        &layer.down_proj}) {
      consider(*m);
    }
  }
  return widest;
}

}  // namespace

Qwen3DecodeGraphs::Qwen3DecodeGraphs(const Qwen3Config& config, std::shared_ptr<const cuda::CublasLtLibrary> library,
                                     cuda::DeviceAllocator& allocator, cudaStream_t stream, cuda::AttentionKernel attention,
                                     int64_t max_rows, int64_t max_context, int64_t block_size, int64_t reference_rows)
    : config_(config),
      allocator_(allocator),
      stream_(stream),
      max_rows_(std::clamp<int64_t>(max_rows, 1, kMaxDecodeGraphRows)),
      table_entries_(max_rows_ * ((std::max<int64_t>(max_context, 1) + block_size - 1) / block_size)),
      block_size_(block_size),
      gemm_(std::move(library), allocator, stream, reference_rows),
      forward_(config, allocator, stream, gemm_, attention) {}

Qwen3DecodeGraphs::~Qwen3DecodeGraphs() { clear(); }

void Qwen3DecodeGraphs::clear() {
  for (auto& [rows, graph] : graphs_) cudaGraphExecDestroy(graph.exec);
  graphs_.clear();
  weights_ = nullptr;
  cache_ = nullptr;
}

bool Qwen3DecodeGraphs::serves(const Qwen3Batch& batch) const {
  if (!is_decode_step(batch) || batch.num_sequences > max_rows_) return false;
  int64_t entries = 0;
  for (int64_t b = 0; b < batch.num_sequences; b++) entries += (batch.sequences[b].start + 1 + block_size_ - 1) / block_size_;
  return entries <= table_entries_;
}

std::string Qwen3DecodeGraphs::description() const {
  return "decode steps of 1 to " + std::to_string(max_rows_) + " sequences through CUDA graphs (" + std::to_string(graphs()) +
         " captured, " + std::to_string(replays_) + " replays)";
}

int64_t Qwen3DecodeGraphs::plan_items(int64_t rows) const {
  const cuda::AttentionKernel a = forward_.attention_kernel();
  return a == cuda::AttentionKernel::Tiled || a == cuda::AttentionKernel::TiledMma ? rows * cuda::kMaxAttentionSplits : 0;
}

void Qwen3DecodeGraphs::reserve_for(const Qwen3DeviceWeights& weights) {
  if (reserved_) return;
  // Every buffer at its largest before the first capture, so no later step moves one a graph holds.
  forward_.reserve(max_rows_, max_rows_, table_entries_, plan_items(max_rows_));
  const int64_t widest = widest_fp8_output(weights);
  if (widest > 0) gemm_.reserve_outputs(max_rows_, std::max(widest, config_.vocab_size));
  reserved_ = true;
}

const float* Qwen3DecodeGraphs::forward(const Qwen3DeviceWeights& weights, const Qwen3Batch& batch, cuda::DeviceKvCache& cache) {
  if (!serves(batch)) throw std::invalid_argument("Qwen3DecodeGraphs::forward: the batch is not a decode step it serves");
  if (cache.block_size() != block_size_) {
    throw std::invalid_argument("Qwen3DecodeGraphs::forward: a cache of " + std::to_string(cache.block_size()) +
                                "-position blocks; expected " + std::to_string(block_size_));
  }
  const int64_t T = validate_qwen3_batch(config_, batch, cache.block_size(), cache.num_blocks());
  if (&weights != weights_ || &cache != cache_) {
    clear();
    weights_ = &weights;
    cache_ = &cache;
  }
  reserve_for(weights);
  const int64_t rows = decode_graph_rows(T, max_rows_);
  Qwen3StepBookkeeping step = qwen3_step_bookkeeping(batch, T, config_.num_key_value_heads, cache.block_size(), cache.num_blocks());
  pad_decode_step(step, rows);
  const Qwen3DeviceStep device = forward_.upload(step, plan_items(rows));
  const auto found = graphs_.find(rows);
  if (found != graphs_.end()) {
    cuda::check(cudaGraphLaunch(found->second.exec, stream_), "replaying a decode graph", {{"rows", rows}, {"T", T}});
    replays_++;
    return found->second.logits;
  }
  // First step of this row count: eagerly (GEMM plans for `rows` made here, outside the capture).
  const float* logits = forward_.enqueue(weights, device, cache);
  capture(rows, weights, device, cache);
  return logits;
}

void Qwen3DecodeGraphs::capture(int64_t rows, const Qwen3DeviceWeights& weights, const Qwen3DeviceStep& step,
                                cuda::DeviceKvCache& cache) {
  const size_t held = allocator_.bytes_in_use();
  cudaGraph_t graph = nullptr;
  cuda::check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "beginning a decode graph's capture", {{"rows", rows}});
  const float* logits = nullptr;
  try {
    logits = forward_.enqueue(weights, step, cache);
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();  // a failed capture's error is not sticky; the next check starts clean
    throw;
  }
  cuda::check(cudaStreamEndCapture(stream_, &graph), "capturing a decode graph", {{"rows", rows}});
  if (allocator_.bytes_in_use() != held) {
    cudaGraphDestroy(graph);
    throw std::logic_error("a decode graph's capture allocated device memory (" + std::to_string(rows) +
                           " rows); a buffer was not reserved, so the graph could hold a stale address");
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  cuda::check(instantiated, "instantiating a decode graph", {{"rows", rows}});
  graphs_[rows] = {exec, logits};
}

}  // namespace s3::model
