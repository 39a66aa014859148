// trainer: the s³ trainer. f32 master weights of a Qwen3 checkpoint, gradients accumulated
// over micro-batches (accumulate), AdamW updates (step), and checkpoints (save / load) that
// resume bit-identically. Batches are checked and laid out (train/train_rows.h) and checkpoints
// read and written here for every device; the parameters, gradients and moments live, and the
// pass, loss and update run, in the compute of options.device (train/trainer_compute.h: the CPU,
// or a CUDA device). Checkpoint folder:
//   DIR/config.json             the model's Hugging Face config (copied from the source checkpoint)
//   DIR/model.safetensors       the weights, F32, under the checkpoint's tensor names (loadable
//                               by Qwen3Weights::load and transformers)
//   DIR/optimizer.safetensors   exp_avg.NAME and exp_avg_sq.NAME per parameter, in the dtype of
//                               the moments (options.adamw.state_dtype: F32, or BF16)
//   DIR/run_config.json         the caller's run configuration (JSON text), when one is given
//   DIR/trainer_state.json      {"step", "adamw": {..., "state_dtype": "f32" | "bf16"}, "loss": {...},
//                               "matmul_precision": "f32" | "bf16"}, written last (the precision is
//                               a record of how the step ran; a trainer of either may load it)
// Every file is written atomically (temp + fsync + rename). A checkpoint whose moments are of the
// other dtype than the trainer's is refused on load (TrainerError naming the file, the tensor and
// the dtype expected), not converted: open the trainer with the checkpoint's state dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/matmul_precision.h"
#include "model/device.h"
#include "model/qwen3_config.h"
#include "model/qwen3_param_layout.h"
#include "model/qwen3_weights.h"
#include "train/adamw.h"
#include "train/losses.h"
#include "train/train_batch.h"
#include "train/trainer_compute.h"

namespace s3::train {

struct TrainerOptions {
  AdamWOptions adamw;
  double icepop_low = 0.2;   // IcePop bounds, compared in double precision (losses.h)
  double icepop_high = 5.0;
  int64_t loss_chunk_rows = 256;
  // Compute a prompt prefix that sequences of a micro-batch share once (train/shared_prefixes.h),
  // when at least this many tokens long; 0 turns sharing off (every sequence computed whole).
  int64_t shared_prefix_min_tokens = 16;
  // Where the parameters live and the training runs (the CPU, or CUDA device 0).
  model::Device device = model::Device::Cpu;
  size_t threads = 0;  // CPU: 0 is default_thread_count()
  // Bytes the forward may keep activations in for the backward, beyond which each layer is
  // recomputed; 0: half the memory free at each micro-batch (the host's MemAvailable on the CPU,
  // the device's on CUDA). Same bits either way.
  size_t activation_bytes = 0;
  // precision.train: the matmuls of the forward, the backward and the LM-head loss in f32, or with
  // BF16-rounded operands and f32 sums (the paper's exploration setting, App. A.1); master
  // weights, gradients, AdamW and every reduction stay f32 either way.
  MatmulPrecision matmul_precision = MatmulPrecision::F32;
  // Opening a folder written by save(): restore its optimizer state and step (resume), or start
  // AdamW afresh from its weights (a new training stage on a saved model).
  bool restore_optimizer = true;
};

class Trainer {
 public:
  // Weights (any dtype) and config from a checkpoint directory; when it also holds
  // optimizer.safetensors and trainer_state.json (a Trainer::save), the optimizer state and step
  // are restored too.
  Trainer(const std::string& checkpoint_dir, const TrainerOptions& options);
  // From in-memory weights (tests); config_json is what save writes as config.json.
  Trainer(const model::Qwen3Weights& weights, std::string config_json, const TrainerOptions& options);

  StepDiagnostics accumulate(const TrainBatch& batch);  // adds into the gradients
  // Data-parallel training, a rank's last micro-batch of an update: accumulates it and sums the
  // gradients over `group` in buckets (train/gradient_buckets.h), each layer's as soon as the backward
  // has finished it where the compute says so (the CPU), overlapping the sum with the layers below;
  // no all_reduce_gradients follows. TrainerError when the group fails.
  StepDiagnostics accumulate_and_sum(const TrainBatch& batch, Collective& group);
  AdamWStepResult step();                               // update from the accumulated gradients, then zero them
  void zero_grad();
  // Data-parallel training: the accumulated gradients summed over every rank of `group` (each rank
  // accumulated its share of the batch), so the step that follows is the same on every rank; the
  // same buckets in the same order as accumulate_and_sum, so ranks may mix the two.
  // TrainerError when the group fails (a peer stopped, a timeout); the gradients are then undefined.
  void all_reduce_gradients(Collective& group);
  // A 64-bit hash of the parameters' bits: equal on ranks that hold the same weights.
  uint64_t parameter_fingerprint() const;
  void save(const std::string& dir, const std::string& run_config_json = "") const;
  // The weights alone, for an inference engine to load (no optimizer state, no trainer_state.json):
  // run_config.json (when given), config.json and model.safetensors exactly as save() writes them.
  void save_model(const std::string& dir, const std::string& run_config_json = "") const;
  void load(const std::string& dir);  // weights, optimizer state, step
  // The accumulated gradients as F32 safetensors under the parameters' names (atomic).
  void save_gradients(const std::string& path) const;

  const model::Qwen3Config& config() const { return config_; }
  // The config.json text save() writes.
  const std::string& config_json() const { return config_json_; }
  const model::Qwen3ParamLayout& layout() const { return layout_; }
  // Host copies of the parameters and gradients (on CUDA downloaded when asked for), in layout()'s
  // order, valid until the next call that changes them.
  const std::vector<float>& params() const { return compute_->params(); }
  const std::vector<float>& grads() const { return compute_->grads(); }
  // Replaces the parameters ([layout().total]); gradients and moments stay.
  void set_params(const std::vector<float>& values);
  int64_t step_count() const { return compute_->step_count(); }
  // Whether the last micro-batch's forward kept every layer's activations (TrainerOptions::activation_bytes).
  bool kept_activations() const { return compute_->kept_activations(); }
  const TrainerOptions& options() const { return options_; }
  // Where it computes: "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)".
  std::string device_description() const { return compute_->description(); }
  // The GPU's name ("NVIDIA H200"), "" on the CPU: what the benchmarks' MFU looks its peak up by.
  std::string gpu_name() const { return compute_->gpu_name(); }
  void set_lr(double lr) { options_.adamw.lr = lr; }
  // Copies of the current weights, F32, for the inference engine.
  model::Qwen3Weights weights() const;
  // A copy of the current parameters on the trainer's CUDA device, for an engine on that device to
  // convert there (no host round trip); null for a CPU trainer.
  std::shared_ptr<const model::Qwen3DeviceParamSnapshot> device_snapshot() const { return compute_->device_snapshot(); }

 private:
  void init(const model::Qwen3Weights& weights);
  StepDiagnostics accumulate_summing(const TrainBatch& batch, Collective* group);
  model::Qwen3Config config_;
  std::string config_json_;
  TrainerOptions options_;
  model::Qwen3ParamLayout layout_;
  std::unique_ptr<TrainerCompute> compute_;
};

}  // namespace s3::train
