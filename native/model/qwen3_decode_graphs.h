// qwen3_decode_graphs.h: decode steps of the CUDA forward pass (model/qwen3_forward_cuda.h) replayed
// from CUDA graphs, so a step of a few sequences costs one launch instead of ~20 per layer. A step
// of single-token sequences is padded to a captured row count (model/qwen3_step_bookkeeping.h: 1, 2,
// 4, 8, then multiples of 8); the padding rows write nothing to the cache and their logits are never
// read. The first step of each row count runs eagerly (its result is the step's) and is captured
// right after; later steps of that count upload their bookkeeping to the same addresses and replay
// the graph, which computes what an eager call would: the same kernels, GEMM algorithms and buffers.
// A forward, GEMM plans and buffers of its own, reserved for the largest step up front, keep every
// address a graph holds fixed; the eager forward beside it keeps its own. Every attention kernel is
// served: the split and reference kernels' launch shape depends only on the row count, and the tiled
// ones' plan is padded to R · kMaxAttentionSplits items (cuda::pad_attention_plan), whose padding
// blocks return at once, as the split kernel's blocks past a token's splits do. Opt-in
// (S3_CUDA_GRAPHS, engine/model_runner.h) until a GPU run has measured it; unverified on a GPU until
// test_cuda_decode_graphs.cpp and the GPU check run (the CPU emulation of scripts/cuda-emulation runs
// its capture and replay).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "cuda/attention.h"
#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "cuda/kv_cache.h"
#include "cuda/matmul.h"
#include "model/qwen3_device_weights.h"
#include "model/qwen3_forward_cuda.h"

namespace s3::model {

// The largest decode step captured.
constexpr int64_t kMaxDecodeGraphRows = 256;

class Qwen3DecodeGraphs {
 public:
  // max_rows: the largest step captured (≤ kMaxDecodeGraphRows); max_context: the longest sequence a
  // step may hold (sizes the block tables); reference_rows: the row count GEMM algorithms are chosen
  // at, as the eager forward's Gemm has it (so both run the same algorithms).
  Qwen3DecodeGraphs(const Qwen3Config& config, std::shared_ptr<const cuda::CublasLtLibrary> library, cuda::DeviceAllocator& allocator,
                    cudaStream_t stream, cuda::AttentionKernel attention, int64_t max_rows, int64_t max_context, int64_t block_size,
                    int64_t reference_rows);
  ~Qwen3DecodeGraphs();
  Qwen3DecodeGraphs(const Qwen3DecodeGraphs&) = delete;
  Qwen3DecodeGraphs& operator=(const Qwen3DecodeGraphs&) = delete;

  // Whether `batch` is a decode step (is_decode_step) of at most max_rows sequences whose block
  // tables fit the ones reserved.
  bool serves(const Qwen3Batch& batch) const;
  // Runs a step serves() accepts over `cache`; returns the device logits of its rows [R × V] (and of
  // the padding rows after them), valid until the next call. Throws std::invalid_argument for a bad
  // batch (nothing queued) and cuda::CudaError when a launch or a capture fails.
  const float* forward(const Qwen3DeviceWeights& weights, const Qwen3Batch& batch, cuda::DeviceKvCache& cache);
  // Drops every graph; the runner calls it when its weights move to new device memory.
  void clear();

  int64_t max_rows() const { return max_rows_; }
  int64_t graphs() const { return int64_t(graphs_.size()); }
  int64_t replays() const { return replays_; }
  // "decode steps of 1 to 256 sequences through CUDA graphs (3 captured, 120 replays)".
  std::string description() const;

 private:
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    const float* logits = nullptr;
  };
  void capture(int64_t rows, const Qwen3DeviceWeights& weights, const Qwen3DeviceStep& step, cuda::DeviceKvCache& cache);
  void reserve_for(const Qwen3DeviceWeights& weights);
  // Items a step of `rows` rows pads the tiled attention's plan to (0 for the other kernels).
  int64_t plan_items(int64_t rows) const;

  Qwen3Config config_;
  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  int64_t max_rows_, table_entries_, block_size_;
  cuda::Gemm gemm_;
  Qwen3CudaForward forward_;
  std::map<int64_t, Graph> graphs_;  // row count → its graph
  const Qwen3DeviceWeights* weights_ = nullptr;  // what the graphs were captured with
  const cuda::DeviceKvCache* cache_ = nullptr;
  bool reserved_ = false;
  int64_t replays_ = 0;
};

}  // namespace s3::model
