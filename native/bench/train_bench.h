// train_bench.h: timed training steps for `swarm bench train`: forward + backward of the SFT loss
// over one packed sequence of `tokens` tokens, then one AdamW step, on the CPU trainer
// (native/train/trainer). FLOPs per token follow the usual model-FLOPs count, so the fraction of
// the FMA peak compares with other trainers (the recompute of each layer in the backward is extra
// work the formula does not credit):
//   6 · (matmul parameters of the layers + LM head) + 12 · L · T · NH · HD / 2
// where the first term is 2 FLOPs per multiply-add for the forward and 4 for the backward of every
// linear layer, and the second the same for the causal q·k and p·v products (a token attends to
// T / 2 keys on average).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/matmul_precision.h"
#include "model/qwen3_config.h"
#include "train/adamw.h"

namespace s3::model {

struct TrainBenchFigures {
  int64_t tokens = 0;                  // per step (one packed sequence)
  double best_seconds = 0;             // accumulate + AdamW step, best repetition
  double median_seconds = 0;           // accumulate + AdamW step, median repetition
  double forward_backward_seconds = 0; // accumulate alone, median
  double optimizer_seconds = 0;        // AdamW step alone, median
  double tokens_per_second = 0;        // from the median step
  double flops_per_token = 0;          // the formula above
  double gflops = 0;                   // tokens_per_second · flops_per_token / 1e9
  double peak_rss_bytes = 0;           // VmHWM after the trainer was built (the high-water mark is reset then)
  double loss = 0;                     // of the last step (finite: a sanity check)
};

// Model FLOPs per trained token at sequence length T (the formula in the header comment).
double train_flops_per_token(const Qwen3Config& config, int64_t T);

// Loads checkpoint_dir into a trainer with `threads` threads (0: the default), then times
// `repetitions` steps after one warm-up step (none when warm_up is false: a step of a big model
// takes minutes). AdamW keeps its moments in `optimizer_state` (train/adamw.h); the trainer's
// matmuls run at `matmul_precision` (train/trainer.h). Tokens are drawn uniformly from the
// vocabulary with a fixed seed, so runs at two precisions train on the same batch.
TrainBenchFigures bench_train(const std::string& checkpoint_dir, int64_t tokens, int repetitions, bool warm_up,
                              size_t threads,
                              train::OptimizerStateDtype optimizer_state = train::OptimizerStateDtype::F32,
                              MatmulPrecision matmul_precision = MatmulPrecision::F32);

}  // namespace s3::model
