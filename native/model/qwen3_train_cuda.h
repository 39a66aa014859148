// qwen3_train_cuda.h: the Qwen3 training pass on a CUDA device, the twin of qwen3_train.h op for
// op (cuda/ and its *_backward ops): the training forward over packed sequences (shared prefixes
// included) that keeps each layer's input and, within a byte budget, its activations (otherwise the
// backward recomputes one layer at a time), and the backward from the gradient of the final normed
// hidden states down to every parameter, accumulated (+=) into a gradient buffer of the master
// parameters' layout. The LM head and the loss are train/losses_cuda.h's.
// Precision: F32 (f32 GEMMs: the CPU trainer's numerics, to rounding) or Bf16 (the paper's BF16
// forward and backward, App. A.1: every GEMM takes bf16 operands, the weights from a bf16 copy of the
// f32 master parameters, with f32 accumulation; activations, norms, attention, softmax and the
// gradients themselves stay f32; with S3_CUDA_TRAIN_ATTENTION=mma the attention too takes bf16
// operands, on tensor cores: cuda/attention_train_mma.h, which has not run on a GPU yet; what has is
// docs/cuda.md's).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "cuda/matmul.h"
#include "cuda/matmul_backward.h"
#include "model/qwen3_config.h"
#include "model/qwen3_param_layout.h"
#include "model/qwen3_train.h"

namespace s3::model {

// The master parameters on the device in qwen3_param_layout.h's layout, and for Bf16 precision the
// same buffer rounded to bf16 (bits), made once per optimizer step.
struct Qwen3DeviceParams {
  const float* f32 = nullptr;
  const uint16_t* bf16 = nullptr;
};

// Every layer's activations on the device (defined in qwen3_train_cuda.cpp).
struct Qwen3DeviceSavedLayers;

// What the forward leaves for the backward, in device memory; reused across batches (buffers grow).
struct Qwen3DeviceTrainState {
  int64_t T = 0, n_seq = 0;
  cuda::DeviceBuffer layer_inputs;  // [(L + 1) × T × C]
  cuda::DeviceBuffer final_normed;  // [T × C]: the LM head's input
  cuda::DeviceBuffer rope_cos, rope_sin;  // [T × HD/2], cpu::rope_tables of each token's position
  cuda::DeviceBuffer rows;          // [T] int32 0 .. T − 1: the rope tables' row of each token
  cuda::DeviceBuffer tokens;        // [T] int32
  cuda::DeviceBuffer seq_begins, seq_parent;  // int64, as the batch holds them
  bool has_parents = false;
  cuda::DeviceBuffer group_tokens, group_offsets, group_positions;  // cuda::TokenGroups of the tokens
  int64_t groups = 0;
  std::shared_ptr<Qwen3DeviceSavedLayers> saved;  // null: the backward recomputes each layer

  const float* final_normed_data() const { return final_normed.get<float>(); }
};

class Qwen3TrainCuda {
 public:
  // saved_activation_bytes: the forward keeps all layers' activations when they fit this budget.
  Qwen3TrainCuda(const Qwen3Config& config, const Qwen3ParamLayout& layout, std::shared_ptr<const cuda::CublasLtLibrary> library,
                 cuda::DeviceAllocator& allocator, cudaStream_t stream, cuda::GemmDtype precision,
                 size_t saved_activation_bytes);
  ~Qwen3TrainCuda();
  Qwen3TrainCuda(const Qwen3TrainCuda&) = delete;
  Qwen3TrainCuda& operator=(const Qwen3TrainCuda&) = delete;

  // batch: host arrays, checked as the CPU checks them (std::invalid_argument, nothing queued).
  void forward(const Qwen3DeviceParams& params, const Qwen3TrainBatch& batch, Qwen3DeviceTrainState& state);

  // d_final_normed [T × C] (device): the loss gradient with respect to state.final_normed. Adds the
  // parameter gradients into grads [layout.total] (device). on_layer_queued(l), when given, is called
  // as soon as everything that writes layer l's gradients is queued on the stream (layers from last
  // to first), so a caller can record an event there and sum that layer while the rest runs.
  void backward(const Qwen3DeviceParams& params, float* grads, const Qwen3DeviceTrainState& state,
                const float* d_final_normed, const std::function<void(int64_t layer)>& on_layer_queued = {});

  cuda::GemmDtype precision() const { return precision_; }
  // Whether the attention runs on tensor cores (attention_train_mma.h: bf16 precision with
  // S3_CUDA_TRAIN_ATTENTION=mma) rather than attention_backward.h's f32 kernels.
  bool attention_on_tensor_cores() const { return attention_mma_; }
  // The budget of the next forwards (the results are the same bits whichever way a layer goes).
  void set_saved_activation_bytes(size_t bytes) { saved_activation_bytes_ = bytes; }

 private:
  void layer_forward(const Qwen3DeviceParams& params, const Qwen3ParamLayout::Layer& W, const Qwen3DeviceTrainState& state,
                     const float* xin, float* xout, Qwen3DeviceSavedLayers& saved, size_t index);
  // out [M × N] = inp [M × K] · Wᵀ, W at params + offset.
  void linear(float* out, const float* inp, const Qwen3DeviceParams& params, size_t offset, int64_t M, int64_t N, int64_t K);
  // dinp [M × K] = dout · W (skipped when null); grads + offset += doutᵀ · inp.
  void linear_backward(float* dinp, float* grads, const float* dout, const float* inp, const Qwen3DeviceParams& params,
                       size_t offset, int64_t M, int64_t N, int64_t K);
  const uint16_t* to_bf16(cuda::ScratchBuffer& buffer, const float* x, size_t n);

  Qwen3Config config_;
  Qwen3ParamLayout layout_;
  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  cuda::GemmDtype precision_;
  bool attention_mma_ = false;
  size_t saved_activation_bytes_;
  cuda::Gemm gemm_;
  cuda::MatmulBackward backward_;
  std::shared_ptr<Qwen3DeviceSavedLayers> recompute_;  // the one layer's activations the backward recomputes into
  cuda::ScratchBuffer bf16_a_{"bf16 GEMM operands (a)"}, bf16_b_{"bf16 GEMM operands (b)"};
  cuda::ScratchBuffer scratch_{"training scratch"}, norm_scratch_{"RMSNorm backward scratch"},
      attention_scratch_{"attention backward scratch"}, attention_operands_{"attention forward bf16 operands"};
};

}  // namespace s3::model
