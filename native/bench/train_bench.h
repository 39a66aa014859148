// train_bench.h: timed training steps for `swarm bench train` and the GPU check's training benchmark:
// forward + backward of the SFT loss over `micro_batches` micro-batches (gradients accumulated, as an
// RL update over several team attempts accumulates them), each of `sequences` packed sequences of
// tokens / sequences tokens, then one AdamW step, on the trainer (native/train/trainer) of the CPU or
// a CUDA device. FLOPs per token follow the usual model-FLOPs count, so the figures compare
// with other trainers (the recompute of each layer in the backward is extra work the formula does
// not credit):
//   6 · (matmul parameters of the layers + LM head) + 12 · L · T · NH · HD / 2
// where the first term is 2 FLOPs per multiply-add for the forward and 4 for the backward of every
// linear layer, and the second the same for the causal q·k and p·v products (a token attends to
// T / 2 keys on average; T is the length of its sequence).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/matmul_precision.h"
#include "model/device.h"
#include "model/qwen3_config.h"
#include "train/adamw.h"
#include "train/trainer.h"

namespace s3::model {

struct TrainBenchOptions {
  int64_t tokens = 0;     // per micro-batch
  int64_t sequences = 1;  // packed into each micro-batch, tokens / sequences each (must divide)
  int64_t micro_batches = 1;  // per step, each its own tokens, their gradients accumulated before AdamW
  int repetitions = 1;    // timed steps
  bool warm_up = true;    // one untimed step first (off: a CPU step of a big model takes minutes)
  size_t threads = 0;     // CPU trainer threads (0: the default)
  train::OptimizerStateDtype optimizer_state = train::OptimizerStateDtype::F32;
  MatmulPrecision matmul_precision = MatmulPrecision::F32;
  Device device = Device::Cpu;
  size_t activation_bytes = 0;  // the trainer's budget for kept activations (0: half the free memory)
  // Called as each phase begins ("building the trainer", "warm-up step: forward + backward",
  // "step 2 of 3: AdamW"), so a slow run can say where it is; null: nothing is reported.
  std::function<void(const std::string& phase)> on_phase;
};

struct TrainBenchFigures {
  int64_t tokens = 0;                  // per step, in all micro-batches
  int64_t sequences = 1;               // per micro-batch
  int64_t micro_batches = 1;           // per step
  std::string device;                  // the trainer's description ("cpu (avx512, 2 threads)")
  double best_seconds = 0;             // accumulate + AdamW step, best repetition
  double median_seconds = 0;           // accumulate + AdamW step, median repetition
  double forward_backward_seconds = 0; // accumulate alone, median
  double optimizer_seconds = 0;        // AdamW step alone, median
  double warm_up_seconds = 0;          // the untimed first step, when there is one (allocations, GEMM plans)
  double tokens_per_second = 0;        // from the median step
  double flops_per_token = 0;          // the formula above
  double gflops = 0;                   // tokens_per_second · flops_per_token / 1e9
  double peak_rss_bytes = 0;           // VmHWM after the trainer was built (the high-water mark is reset then)
  double loss = 0;                     // of the last step, the mean over its tokens (finite: a sanity check)
  bool activations_kept = false;       // the last step's backward used kept activations (else it recomputed each layer)
  // On a GPU bench/device_peaks.h knows: its datasheet product and dense BF16 peak ("" and 0 otherwise),
  // and, for BF16 matmuls, the model FLOPs utilisation gflops / that peak (-1 when not reported: the
  // CPU, f32 matmuls, or a GPU not in the table).
  std::string peak_product;
  double peak_tflops = 0;
  double mfu = -1;
};

// Model FLOPs per trained token at sequence length T (the formula in the header comment).
double train_flops_per_token(const Qwen3Config& config, int64_t T);

// Loads checkpoint_dir into a trainer on options.device, then times the steps. AdamW keeps its
// moments in optimizer_state (train/adamw.h); the trainer's matmuls run at matmul_precision
// (train/trainer.h). Tokens are drawn uniformly from the vocabulary with a fixed seed, so runs at
// two precisions or on two devices train on the same batches. std::invalid_argument for options that
// do not make a batch.
TrainBenchFigures bench_train(const std::string& checkpoint_dir, const TrainBenchOptions& options);

// The trainer bench_train builds for options (AdamW's rate 1e-6, so that repeated steps on one batch
// stay near the initial weights).
train::TrainerOptions train_bench_trainer_options(const TrainBenchOptions& options);

// The same steps on a trainer already built (with train_bench_trainer_options), so that several
// batch sizes share one (the GPU check's ladder): options' device, precision, threads and optimizer
// state are the trainer's; the steps update its weights.
TrainBenchFigures bench_train(train::Trainer& trainer, const TrainBenchOptions& options);

}  // namespace s3::model
