// qwen3_forward.h: the Qwen3 forward pass on the CPU, in f32 from the stored weights (SPEC §10):
//   x = embed(tokens)
//   per layer: h = input_layernorm(x); q, k, v = h·Wqᵀ, h·Wkᵀ, h·Wvᵀ;
//              q, k = rope(q_norm(q)), rope(k_norm(k)) per head; x += o_proj(attention(q, k, v))
//              h = post_attention_layernorm(x); x += down(silu(gate(h)) · up(h))
//   logits = model.norm(x) · lm_headᵀ (lm_head = embed_tokens when tied)
// One call runs a batch of sequences, each adding `length` new tokens after `start` cached ones:
// prefill is length > 1 (a whole prompt, or a chunk of one), decode is length 1 for many
// sequences at once; both may be mixed in one batch. The new tokens' keys and values are
// written to the cache. A sequence's logits have the same bits whatever else is in the batch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "model/kv_cache.h"
#include "model/qwen3_weights.h"

namespace s3::model {

struct Qwen3Batch {
  const int32_t* tokens = nullptr;                    // [T]: every sequence's new tokens, packed in order
  const cpu::AttentionSequence* sequences = nullptr;  // [B]: start, length and block table of each; T = Σ length
  int64_t num_sequences = 0;
  // [R]: which packed tokens (indices into tokens) get logits, in output order; e.g. each
  // sequence's last token when generating, every token when scoring.
  const int64_t* logit_rows = nullptr;
  int64_t num_logit_rows = 0;
  // [B] or nullptr: shifts sequence b's rotary positions by rope_offsets[b] ≥ 0 without changing
  // what it attends to (Hugging Face's position_ids = offset + 0, 1, ...; `swarm model logits --start-pos`).
  const int64_t* rope_offsets = nullptr;
};

// Scratch for the forward pass, reused across calls so a step allocates nothing once the
// largest batch has been seen.
struct Qwen3Workspace {
  std::vector<float> x;          // [T × C] residual stream
  std::vector<float> normed;     // [T × C] normalized input of a block
  std::vector<float> q, attn;    // [T × NH·HD]
  std::vector<float> k, v;       // [T × NKV·HD]
  std::vector<float> gate, up;   // [T × I]
  std::vector<float> delta;      // [T × C] a block's output before the residual add
  std::vector<float> rope_cos, rope_sin;  // [T × HD/2]
  std::vector<int64_t> positions;         // [T]
  std::vector<float> final_rows;          // [R × C] normalized rows the LM head reads

  void reserve(const Qwen3Config& config, int64_t T, int64_t R);
};

// Checks a batch against the model and a cache of num_blocks blocks of block_size positions (what
// qwen3_forward and the CUDA forward promise to check, below) and returns its T.
int64_t validate_qwen3_batch(const Qwen3Config& config, const Qwen3Batch& batch, int64_t block_size, int64_t num_blocks);

// logits: [R × V] f32 for the batch's logit rows. Validates the whole batch (tokens in the
// vocabulary, positions below max_position_embeddings, block tables covering every position with
// block ids inside the cache, logit rows inside [0, T)) before anything is written, and throws
// std::invalid_argument naming the sequence, index and limit otherwise.
void qwen3_forward(const Qwen3Weights& weights, const Qwen3Batch& batch, KvCache& cache, Qwen3Workspace& workspace,
                   float* logits, ThreadPool& pool);

}  // namespace s3::model
