// bf16_round.h: `--weights bf16`: every f32 tensor of a model (embedding, LM head, linear layers,
// norms) rounded to BF16, nearest even, as a BF16 checkpoint of the same values holds them; tensors
// already in a narrower dtype (BF16, F16, FP8 with its block scales) stay as stored. This is how
// rollouts run on BF16 weights (precision.rollout.weights) while the trainer keeps f32 masters.
#pragma once

#include "model/qwen3_weights.h"

namespace s3::model {

// A copy of `weights` with every f32 matrix stored as BF16 and every norm rounded to a BF16 value.
Qwen3Weights round_weights_bf16(const Qwen3Weights& weights);

}  // namespace s3::model
