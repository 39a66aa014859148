// qwen3_step_bookkeeping.h: the per-token bookkeeping a device forward pass reads (host arrays, built
// on the host and uploaded in one copy): tokens, rotary and attention positions, where each token's
// block table starts, the concatenated block tables, the cache row its key and value go to, and the
// logit rows. Also the decode-step form CUDA graphs replay (model/qwen3_decode_graphs.h): a step of
// single-token sequences padded to a captured row count, the padding rows writing nothing to the
// cache. Host code, compiled in every build and tested on the CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "model/qwen3_forward.h"

namespace s3::model {

struct Qwen3StepBookkeeping {
  std::vector<int32_t> tokens;          // [T]
  std::vector<int32_t> rope_positions;  // [T] rotary position (rope offset + position)
  std::vector<int32_t> positions;       // [T] absolute position: the token sees keys 0 .. position
  std::vector<int32_t> table_offsets;   // [T] where its sequence's block table starts in `tables`
  std::vector<int32_t> tables;          // the block tables of the batch's sequences, concatenated
  std::vector<int64_t> kv_rows;         // [T] the layer-local cache row of KV head 0 (cuda::kv_store); < 0: none
  std::vector<int32_t> logit_rows;      // [R]
};

// The bookkeeping of a validated batch of T packed tokens over a cache of num_blocks blocks of
// block_size positions with kv_heads KV heads per layer. A sequence's table holds the blocks its
// positions 0 .. start + length − 1 use.
Qwen3StepBookkeeping qwen3_step_bookkeeping(const Qwen3Batch& batch, int64_t T, int64_t kv_heads, int64_t block_size,
                                            int64_t num_blocks);

// Whether a batch is a decode step CUDA graphs can replay: at least one sequence, every sequence
// adding one token, every token a logit row in order (logit_rows[i] = i), no rotary offsets.
bool is_decode_step(const Qwen3Batch& batch);

// The row counts decode graphs are captured at: 1, 2, 4, 8, then multiples of 8 (vLLM's sizes), up
// to max_rows (itself a captured size).
std::vector<int64_t> decode_graph_row_counts(int64_t max_rows);
// The smallest captured row count ≥ rows, or 0 when rows exceeds max_rows.
int64_t decode_graph_rows(int64_t rows, int64_t max_rows);

// Pads a decode step's bookkeeping to `rows` tokens and logit rows: padding tokens are token 0 at
// position 0 reading block table entry 0 (some real block: their results are never read) and write
// no key or value (kv_rows −1); logit row i is token i. Throws std::invalid_argument when the step
// has more rows than that, or no table entry for the padding to read.
void pad_decode_step(Qwen3StepBookkeeping& step, int64_t rows);

}  // namespace s3::model
