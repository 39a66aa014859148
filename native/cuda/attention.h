// attention.h: causal grouped-query attention over the device's paged KV cache, the CUDA twin of
// cpu/attention.h, in four implementations (AttentionKernel; the runner picks one, S3_CUDA_ATTENTION):
//   attention_forward (split): split-KV paged attention for every query row, prefill and decode
//     alike (vLLM's paged attention v2 idea): thread block (token, KV head, split) serves the G query
//     heads of the group, so keys and values are read once per group; a split covers a fixed range
//     of absolute positions whose length depends only on the token's own position
//     (attention_split_positions), each thread scores one key (a sequential dot over HD), the
//     online softmax advances one tile of keys at a time with fixed-tree block reductions, and a
//     merge kernel combines the splits in order. A row's result therefore depends only on its own
//     visible keys: the same bits in a prefill chunk, a decode step or a batch of any size.
//   attention_forward_tiled (tiled, attention_tiled.h): the same splits, with key and value tiles
//     staged in shared memory and reused by up to 64 query rows of one sequence (prefill) or
//     streamed once per (token, KV head, split) (decode); the same batch invariance.
//   attention_forward_tiled_mma (tiled-mma, attention_tiled.h): the tiled structure with both
//     products on bf16 tensor cores for bf16 and fp8 caches (NMSE ≤ 1e-4 instead of 1e-7), the
//     tiled f32 kernels for f32 caches; the same batch invariance.
//   attention_reference: one thread block per (token, query head) in double precision, two passes
//     over every visible key: simple enough to trust, the device's ground truth for the others.
// Keys and values are f32, bf16 or fp8 (widened, times the row's scale, in registers).
// Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/host_device.h"
#include "cuda/kv_cache.h"

namespace s3::cuda {

// Where each packed query token is and what it may see (device arrays).
struct AttentionTokens {
  const int32_t* position = nullptr;      // [T] absolute position p of token t: it sees keys 0 .. p
  const int32_t* table_offset = nullptr;  // [T] start of its sequence's block table in `tables`
  const int32_t* tables = nullptr;        // block tables of the batch's sequences, concatenated
  int64_t T = 0;
};

// Keys a split holds for a token at `position`: 256, doubled until at most kMaxAttentionSplits
// splits cover positions 0 .. position.
constexpr int64_t kMaxAttentionSplits = 16;
S3_HOST_DEVICE inline int64_t attention_split_positions(int64_t position) {
  int64_t length = 256;
  while (length * kMaxAttentionSplits < position + 1) length *= 2;
  return length;
}

// The implementations the forward pass can run attention with.
enum class AttentionKernel { Split, Tiled, TiledMma, Reference };

// "split", "tiled", "tiled-mma" or "reference".
const char* attention_kernel_name(AttentionKernel kernel);

// The implementation S3_CUDA_ATTENTION names ("split", "tiled" or "tiled-mma"), read once per
// process; Split where it is unset or empty. Split stays the default until a GPU run has validated
// the tiled ones (docs/cuda.md).
// Throws std::invalid_argument naming the variable, its value and the accepted ones otherwise.
AttentionKernel attention_kernel_from_environment();

// Where the partial state (m, l, then HD accumulated values) of (token t, query head hq, split) lives
// in the scratch attention_forward and attention_forward_tiled write and attention_merge_splits reads.
S3_HOST_DEVICE inline int64_t attention_partial_offset(int64_t t, int64_t hq, int64_t split, int64_t NH, int64_t HD) {
  return ((t * NH + hq) * kMaxAttentionSplits + split) * (HD + 2);
}

// Whether attention_forward serves this head shape (HD a power of two in [16, 256], G ≤ 8);
// other shapes use attention_reference.
bool attention_forward_supports(int64_t NH, int64_t NKV, int64_t HD);

// Floats of scratch attention_forward (and attention_forward_tiled) needs for T tokens.
int64_t attention_scratch_floats(int64_t T, int64_t NH, int64_t HD);

// out, q: [T × NH × HD] f32; query head h reads KV head h / (NH / NKV); scores scaled by
// 1/sqrt(HD). Every token's own key and value must be in the pages already.
void attention_forward(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, int64_t NH,
                       float* scratch, cudaStream_t stream);
// out[t, hq] from the partial states of the splits of (t, hq) in `scratch`, merged in split order
// (core/ops/online_softmax.h); the last step of attention_forward and attention_forward_tiled.
void attention_merge_splits(float* out, const float* scratch, const AttentionTokens& tokens, int64_t NH, int64_t HD,
                            cudaStream_t stream);

void attention_reference(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, int64_t NH,
                         cudaStream_t stream);

}  // namespace s3::cuda
