// train_rows.h: a TrainBatch checked and laid out as the rows a training pass computes, the same
// for every device: each token's target (the next token of its sequence, −1 at a sequence's end),
// the per-row loss inputs, and, when sequences share a long enough prompt prefix, that prefix
// computed once (train/shared_prefixes.h: its rows carry no loss; the children attend to it). Then
// the loss's statistics turned into the StepDiagnostics a trainer reports.
#pragma once

#include <cstdint>
#include <vector>

#include "model/qwen3_train.h"
#include "train/losses.h"
#include "train/train_batch.h"

namespace s3::train {

// The per-row inputs of a micro-batch (empty vectors for the parts its loss does not use).
struct TrainRowInputs {
  std::vector<int32_t> tokens, targets;
  std::vector<float> coef, old_logprobs;
  std::vector<int32_t> draw_tokens;
  std::vector<float> draw_logprobs, ref_logprobs, kl_weight;
};

struct TrainRows {
  TrainRowInputs in;
  int64_t num_draws = 0;
  std::vector<int64_t> begins;   // sequence starts, then the row count
  std::vector<int64_t> parents;  // per sequence: the sequence whose rows it continues, or −1
  int64_t shared_rows = 0;       // rows a shared prefix stood in for

  int64_t rows() const { return int64_t(in.tokens.size()); }
  // Views of this object (valid while it lives).
  model::Qwen3TrainBatch model_batch() const;
  LossInputs loss_inputs() const;
};

// Checks `batch` against a vocabulary of vocab_size tokens (TrainerError naming the field and what
// was expected) and lays it out; prefixes of at least shared_prefix_min_tokens tokens are shared
// (0: never).
TrainRows prepare_train_rows(const TrainBatch& batch, int32_t vocab_size, int64_t shared_prefix_min_tokens);

// The loss's settings for `batch` under a trainer's IcePop bounds, chunking and precision.
LossOptions train_loss_options(const TrainBatch& batch, double icepop_low, double icepop_high, int64_t chunk_rows,
                               MatmulPrecision precision);

// What accumulate reports from the loss's statistics.
StepDiagnostics step_diagnostics(const LossStats& stats, const TrainBatch& batch, int64_t shared_rows);

}  // namespace s3::train
