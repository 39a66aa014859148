// trainer_compute.h: the device half of a train::Trainer. It owns the f32 master parameters, the
// accumulated gradients and AdamW's moments where its device keeps them, and runs the training pass,
// the fused LM-head loss and the update there. The Trainer around it checks batches, lays out rows,
// reports diagnostics and reads and writes checkpoints, identically for every device, through host
// copies this interface hands out. Implementations: cpu_trainer_compute.h (host memory, the thread
// pool) and cuda_trainer_compute.h (device memory, one stream; built only with CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/matmul_precision.h"
#include "model/device.h"
#include "model/qwen3_config.h"
#include "model/qwen3_device_params.h"
#include "model/qwen3_param_layout.h"
#include "train/adamw.h"
#include "train/losses.h"
#include "train/train_rows.h"

namespace s3::train {

struct TrainerComputeOptions {
  MatmulPrecision matmul_precision = MatmulPrecision::F32;
  OptimizerStateDtype state_dtype = OptimizerStateDtype::F32;
  size_t threads = 0;  // CPU: the pool's threads (0: default_thread_count())
  // Bytes the training forward may keep activations in for the backward (beyond it each layer is
  // recomputed); 0: half the memory free at each micro-batch, whatever an engine beside the trainer
  // holds by then (the CPU: the host's available memory; CUDA: the device's). The results are the
  // same bits either way.
  size_t activation_bytes = 0;
};

class TrainerCompute {
 public:
  virtual ~TrainerCompute() = default;

  // "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)".
  virtual std::string description() const = 0;
  // The GPU's name as the CUDA runtime gives it ("NVIDIA H200"); "" on the CPU.
  virtual std::string gpu_name() const { return ""; }

  // The training pass over `rows`, the loss and its backward; the gradients are added into the
  // accumulated ones. std::invalid_argument for a batch the model refuses (nothing changed).
  // on_layer_done(l) as soon as layer l's accumulated gradients are final (layers from the last to
  // the first): on the CPU once they are computed; on CUDA once they are queued, after an event the
  // compute's all_reduce_gradient_range waits for on its own stream.
  virtual LossStats accumulate(const TrainRows& rows, const LossOptions& options,
                               const std::function<void(int64_t layer)>& on_layer_done = {}) = 0;
  // One AdamW update from the accumulated gradients (train::adamw_plan_update plans it), which are
  // then zeroed; the step count advances.
  virtual AdamWStepResult step(const AdamWOptions& options) = 0;
  virtual void zero_grad() = 0;
  virtual int64_t step_count() const = 0;
  // Whether the last accumulate's forward kept every layer's activations for its backward (false:
  // the backward recomputed each layer from its input, or nothing has been accumulated yet).
  virtual bool kept_activations() const = 0;
  // Data-parallel training: gradients [offset, offset + count) summed over every rank of `group`, in
  // place (on the device when the group reaches device memory, else through a host copy). May run on
  // another thread than accumulate's, on a range accumulate no longer writes (train/gradient_buckets.h).
  virtual void all_reduce_gradient_range(Collective& group, size_t offset, size_t count) = 0;

  // Host copies (CPU: the storage itself), valid until the next call that changes them.
  virtual const std::vector<float>& params() const = 0;
  virtual const std::vector<float>& grads() const = 0;
  // The moments (in the vectors of the state dtype) and the step.
  virtual const AdamWState& optimizer_state() const = 0;

  // A copy of the parameters on the device, for an engine there (model/qwen3_device_params.h); null
  // for the CPU.
  virtual std::shared_ptr<const model::Qwen3DeviceParamSnapshot> device_snapshot() const { return nullptr; }

  // Replaces the parameters (the gradients and moments stay).
  virtual void set_params(const float* values) = 0;
  // Replaces parameters, moments and step (a checkpoint's), zeroing the gradients.
  virtual void set_state(std::vector<float> params, AdamWState state) = 0;
};

// A compute on `device` for a model of this config, its parameters `params` (in layout's order)
// and fresh moments. CUDA where the addon was built without it, or cannot run, throws
// std::runtime_error with the reason.
std::unique_ptr<TrainerCompute> make_trainer_compute(model::Device device, const model::Qwen3Config& config,
                                                     const model::Qwen3ParamLayout& layout, std::vector<float> params,
                                                     const TrainerComputeOptions& options);

}  // namespace s3::train
