// qwen3_forward_cuda.h: the Qwen3 forward pass on a CUDA device, the twin of qwen3_forward.h, op
// for op (cuda/): embedding; per layer RMSNorm, q/k/v GEMMs, per-head q/k RMSNorm and RoPE, the KV
// store, paged attention (cuda/attention.h: split, tiled or reference), o GEMM and residual add, RMSNorm, gate/up GEMMs, SwiGLU, down GEMM
// and residual add; the final norm of the logit rows and the LM head. Activations stay f32 between
// ops; each GEMM's input is converted to its weight's input type (bf16, or FP8 with 1 × 128 scales)
// just before it. One call validates the batch like the CPU forward, uploads its bookkeeping in one
// copy and queues everything on the stream. Unverified on a GPU until test_cuda_model.cpp runs.
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

namespace s3::model {

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
  void upload_batch(const Qwen3Batch& batch, int64_t T, int64_t block_size, int64_t num_blocks);

  Qwen3Config config_;
  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  cuda::Gemm& gemm_;
  cuda::AttentionKernel attention_;
  cuda::DeviceBuffer rope_cos_, rope_sin_;  // [max_position_embeddings × HD/2]
  // The step's bookkeeping: host staging and its device copy, and where each array starts.
  std::vector<uint8_t> staging_;
  cuda::ScratchBuffer meta_{"the batch's bookkeeping"};
  const int32_t *tokens_ = nullptr, *rope_positions_ = nullptr, *positions_ = nullptr, *table_offsets_ = nullptr,
                *tables_ = nullptr, *logit_rows_ = nullptr;
  const int64_t* kv_rows_ = nullptr;
  cuda::AttentionWork attention_work_;  // the tiled kernels' plan of the step (cuda/attention_tiled.h)
  // Activations.
  cuda::ScratchBuffer x_{"activations (x)"}, normed_{"activations (normed)"}, q_{"activations (q)"}, k_{"activations (k)"},
      v_{"activations (v)"}, attn_{"activations (attention)"}, gate_{"activations (gate)"}, up_{"activations (up)"},
      delta_{"activations (delta)"}, input_{"GEMM inputs"}, input_scales_{"GEMM input scales"},
      attention_scratch_{"attention partial results"}, final_{"final rows"}, logits_{"logits"};
};

}  // namespace s3::model
