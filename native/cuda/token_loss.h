// token_loss.h: the per-row half of the fused LM-head loss on the device (the CPU's is inside
// train/losses.cpp): a thread block per row of a chunk's logits takes the row's maximum and its two
// sums over the vocabulary (fixed-tree block reductions, in double), applies core/ops/token_loss.h,
// and overwrites the logits with ∂L/∂z in place. The caller (train/losses_cuda) gathers the rows,
// runs the GEMMs and adds the rows' results up. Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/ops/token_loss.h"

namespace s3::cuda {

// One chunk of n rows: their inputs, gathered to the chunk's row order (device arrays).
struct TokenLossChunk {
  const int32_t* targets = nullptr;       // [n]
  const float* coef = nullptr;            // [n]
  const float* old_logprobs = nullptr;    // [n] (policy gradient)
  const float* ref_logprobs = nullptr;    // [n] (KL penalty)
  const float* kl_weight = nullptr;       // [n] (KL penalty)
  const int32_t* draw_tokens = nullptr;   // [n × num_draws] (score centering)
  const float* draw_logprobs = nullptr;   // [n × num_draws]
  int64_t n = 0;
};

// Largest num_draws the kernel serves (the paper's K is 32).
constexpr int64_t kTokenLossMaxDraws = 64;

// logits [n × V] f32 → ∂L/∂logits in place; rows [n] receive each row's contribution.
void token_loss_rows(float* logits, int64_t V, const TokenLossChunk& chunk, const ops::TokenLossSettings& settings,
                     ops::TokenLossRow* rows, cudaStream_t stream);

}  // namespace s3::cuda
