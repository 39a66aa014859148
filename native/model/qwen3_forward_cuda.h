// qwen3_forward_cuda.h: the Qwen3 forward pass on a CUDA device, the twin of qwen3_forward.h, op
// for op (cuda/): embedding; per layer RMSNorm, q/k/v GEMMs, per-head q/k RMSNorm and RoPE, the KV
// store, paged attention (cuda/attention.h: split, tiled or reference), o GEMM and residual add, RMSNorm, gate/up GEMMs, SwiGLU, down GEMM
// and residual add; the final norm of the logit rows and the LM head. Activations stay f32 between
// ops; each GEMM's input is converted to its weight's input type (bf16, or FP8 with 1 × 128 scales)
// just before it. One call validates the batch like the CPU forward, uploads its bookkeeping
// (model/qwen3_step_bookkeeping.h) in one copy and queues everything on the stream; the upload and
// the queueing are also separate calls, so decode steps can be captured into CUDA graphs and
// replayed (model/qwen3_decode_graphs.h). Unverified on a GPU until test_cuda_model.cpp runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/attention.h"
#include "cuda/attention_tiled.h"
#include "cuda/device_memory.h"
#include "cuda/kv_cache.h"
#include "cuda/matmul.h"
#include "model/qwen3_device_weights.h"
#include "model/qwen3_forward.h"
#include "model/qwen3_step_bookkeeping.h"

namespace s3::model {

// A step's bookkeeping in device memory (Qwen3CudaForward::upload) and its sizes.
struct Qwen3DeviceStep {
  const int32_t *tokens = nullptr, *rope_positions = nullptr, *positions = nullptr, *table_offsets = nullptr,
                *tables = nullptr, *logit_rows = nullptr;
  const int64_t* kv_rows = nullptr;
  cuda::AttentionWork attention_work;  // the tiled kernels' plan of the step (cuda/attention_tiled.h)
  int64_t T = 0, R = 0;
};

class Qwen3CudaForward {
 public:
  // attention: the implementation every layer runs (Reference: cuda::attention_reference, the
  // device's ground truth); head shapes the fast kernels do not serve run Reference whatever is asked.
  Qwen3CudaForward(const Qwen3Config& config, cuda::DeviceAllocator& allocator, cudaStream_t stream, cuda::Gemm& gemm,
                   cuda::AttentionKernel attention = cuda::AttentionKernel::Split);

  // Runs `batch` (host arrays, as qwen3_forward takes them) over `cache`; returns the device logits
  // [R × V] of its logit rows, valid until the next call. Throws std::invalid_argument for a bad
  // batch (nothing queued) and cuda::CudaError for a launch that fails.
  const float* forward(const Qwen3DeviceWeights& weights, const Qwen3Batch& batch, cuda::DeviceKvCache& cache);

  // Copies a step's bookkeeping (and the tiled attention's plan of it, where this forward runs a
  // tiled kernel) to the device, waiting for the copy; valid until the next upload. Its arrays are
  // laid out in one buffer, the fixed-size ones first, so steps of one T and R share their addresses.
  // plan_items > 0 pads a decode step's tiled plan to that many items (cuda::pad_attention_plan),
  // which makes the plan fixed-size too: steps of one T, R and plan_items then launch the same grids
  // from the same addresses (decode graphs).
  Qwen3DeviceStep upload(const Qwen3StepBookkeeping& step, int64_t plan_items = 0);
  // Queues the forward of an uploaded step over `cache`; returns the device logits [R × V]. Queues
  // nothing but launches (no copy, no wait), and allocates only when a buffer must grow: after
  // reserve() for at least these sizes, or a call with the same sizes, it can be captured into a
  // CUDA graph, and a replay computes what a new call would.
  const float* enqueue(const Qwen3DeviceWeights& weights, const Qwen3DeviceStep& step, cuda::DeviceKvCache& cache);
  // Grows every buffer to what a step of up to T tokens, R logit rows, `table_entries` block table
  // entries and a tiled plan of `plan_items` items needs, so such steps never move them.
  void reserve(int64_t T, int64_t R, int64_t table_entries, int64_t plan_items = 0);

  // "cuda split-KV paged attention", "cuda tiled paged attention", "cuda tiled paged attention, bf16
  // tensor cores for bf16 and fp8 caches" or "cuda reference attention (double)".
  std::string attention_name() const;
  cuda::AttentionKernel attention_kernel() const { return attention_; }

 private:
  struct GemmInput {
    const void* data;
    const float* scales;
  };
  // x [T × K] f32 converted to `dtype`, the input type of a weight (F32: x itself).
  GemmInput prepare(const float* x, int64_t T, int64_t K, cuda::GemmDtype dtype);
  // outs[i] = x · ws[i]ᵀ for weights that share K, converting x once per input type.
  void linear(float* const* outs, const cuda::DeviceMatrix* const* ws, int count, const float* x, int64_t T);
  // Every activation buffer of a step of T tokens and R logit rows, grown as needed.
  struct Activations {
    float *x, *normed, *q, *k, *v, *attn, *gate, *up, *delta, *scratch, *final_rows, *logits;
  };
  Activations activations(int64_t T, int64_t R);
  // Bytes of an uploaded step (upload()'s layout).
  static size_t step_bytes(int64_t T, int64_t R, int64_t table_entries, int64_t plan_items);

  Qwen3Config config_;
  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  cuda::Gemm& gemm_;
  cuda::AttentionKernel attention_;
  cuda::DeviceBuffer rope_cos_, rope_sin_;  // [max_position_embeddings × HD/2]
  // The step's bookkeeping: host staging and its device copy.
  std::vector<uint8_t> staging_;
  cuda::ScratchBuffer meta_{"the batch's bookkeeping"};
  // Activations.
  cuda::ScratchBuffer x_{"activations (x)"}, normed_{"activations (normed)"}, q_{"activations (q)"}, k_{"activations (k)"},
      v_{"activations (v)"}, attn_{"activations (attention)"}, gate_{"activations (gate)"}, up_{"activations (up)"},
      delta_{"activations (delta)"}, input_{"GEMM inputs"}, input_scales_{"GEMM input scales"},
      attention_scratch_{"attention partial results"}, final_{"final rows"}, logits_{"logits"};
};

}  // namespace s3::model
