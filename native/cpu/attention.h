// attention.h: causal grouped-query attention over a paged K/V cache, flash style: keys are
// visited in chunks of kAttentionKeyChunk positions with a running (online) softmax, so no
// T × T score matrix ever exists, whatever the sequence length.
//
// Determinism: a query row's result depends only on its own visible keys. Chunks are fixed
// ranges of absolute positions; keys a row may not see are excluded from its max and contribute
// exact zeros. So whether a token is computed in a prefill tile, alone in a decode step, or next
// to other sequences, its output has the same bits (for a given SIMD level).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace s3::cpu {

// Keys per online-softmax step; cache blocks hold a multiple of it.
constexpr int64_t kAttentionKeyChunk = 16;

// One layer's K/V pages. Block b of a pool is [NKV × block_size × HD] f32: each KV head's rows
// are contiguous, row i of block b holding the position block_table[...] maps to b plus i.
struct KvPages {
  const float* keys = nullptr;    // [num_blocks × NKV × block_size × HD]
  const float* values = nullptr;  // [num_blocks × NKV × block_size × HD]
  int64_t block_size = 0;         // positions per block, a multiple of kAttentionKeyChunk
};

// One sequence of a batch.
struct AttentionSequence {
  int64_t start = 0;   // positions [0, start) were cached by earlier steps
  int64_t length = 0;  // new tokens this step, at positions start .. start + length - 1
  // Cache block of each run of block_size positions: positions [i·block_size, (i+1)·block_size)
  // live in block block_table[i]; it covers at least start + length positions.
  const int32_t* block_table = nullptr;
  int64_t num_table_blocks = 0;
};

// One implementation per SIMD level.
struct AttentionKernels {
  const char* name;
  // Folds J (≤ kAttentionKeyChunk) consecutive keys into R query rows' running softmax.
  // q: [R × HD]; k, v: [J × HD]; visible[r] ≤ J: row r sees keys 0 .. visible[r] − 1 of the chunk;
  // row_max[R], row_sum[R], out[R × HD]: running max of scaled scores, sum of exp(score − max),
  // and Σ exp(score − max)·v (unnormalized), updated in place.
  void (*attend_chunk)(const float* q, int64_t R, const float* k, const float* v, int64_t J, int64_t HD,
                       const int32_t* visible, float scale, float* row_max, float* row_sum, float* out);
};

// out, q: [T × NH × HD] for the T = Σ length new tokens, packed sequence after sequence. Each
// new token's keys and values must already be in the pages. Query head h reads KV head
// h / (NH / NKV); scores are scaled by 1/sqrt(HD); softmax in f32.
void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool, const AttentionKernels& kernels);
void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool);

const AttentionKernels* attention_kernels_for(SimdLevel level);
const AttentionKernels& attention_kernels();

extern const AttentionKernels kAttentionAvx2;
extern const AttentionKernels kAttentionAvx512;

}  // namespace s3::cpu
