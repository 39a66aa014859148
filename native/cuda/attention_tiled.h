// attention_tiled.h: the tiled implementation of cuda/attention.h's paged attention (AttentionKernel::
// Tiled): key and value tiles of 64 positions staged in shared memory with 16-byte cp.async copies,
// reused by up to 64 query rows of one sequence and KV head (prefill), or streamed once per (token,
// KV head, split) (decode), f32 arithmetic for every KV dtype. It keeps attention_forward's splits
// (attention_split_positions) and its merge, and the same guarantee: a row's bits depend only on its
// own query, its position and its keys, never on which rows share its block or the batch. Design,
// tiling and the arithmetic order are in the header of attention_tiled.cu.
//
// The host plans the work of a batch once (plan_attention_tiles: which tokens share a block, which
// splits each needs), uploads the plan with the batch's other bookkeeping, and every layer launches
// attention_forward_tiled with it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/attention.h"
#include "cuda/kv_cache.h"

namespace s3::cuda {

// Keys per tile: tiles start at multiples of 64 absolute positions (every split length is one).
constexpr int64_t kTiledKeyTile = 64;
// Query rows (token × query head of one group) of a multi-row block: 64, or 32 for head_dim 256.
constexpr int64_t attention_tiled_rows(int64_t HD) { return HD <= 128 ? 64 : 32; }
// Runs of a sequence with fewer query rows than this go to the single-token kernel (decode-shaped).
constexpr int64_t kTiledMinTileRows = 16;

// The work of one batch: items of (first token, tokens, split), tile_items for the multi-row kernel
// (consecutive positions of one sequence with one split length) then single_items of one token each.
// Which kernel serves a token, and with whom, never changes its bits; only the speed.
struct AttentionTilePlan {
  std::vector<int32_t> items;  // [(tile_items + single_items) × 3]
  int64_t tile_items = 0;
  int64_t single_items = 0;
};

// The same, in device memory (items uploaded as they are).
struct AttentionWork {
  const int32_t* items = nullptr;
  int64_t tile_items = 0;
  int64_t single_items = 0;
};

// Plans T packed tokens (host arrays as AttentionTokens holds them on the device; a sequence's
// tokens are consecutive with consecutive positions): runs of up to attention_tiled_rows(HD) / G
// tokens of one sequence whose positions share a split length become multi-row items when they hold
// at least min_tile_rows query rows, the rest single-token items; every token gets one item per split
// it needs. Items are ordered longest split first (the longest work starts first). Throws
// std::invalid_argument for shapes the tiled kernels do not serve (attention_forward_supports).
AttentionTilePlan plan_attention_tiles(const int32_t* position, const int32_t* table_offset, int64_t T, int64_t NH,
                                       int64_t NKV, int64_t HD, int64_t min_tile_rows = kTiledMinTileRows);

// Pads a decode step's plan with empty items (count 0: their blocks return at once) to `single_items`
// single-token items, so that the step's launches have a shape fixed by that capacity alone and a
// CUDA graph captured from one step replays another's plan (model/qwen3_decode_graphs.h; a step of R
// tokens needs at most R · kMaxAttentionSplits). Throws std::invalid_argument where the plan has
// multi-row items (not a decode step) or more single items than that.
void pad_attention_plan(AttentionTilePlan& plan, int64_t single_items);

// out, q: [T × NH × HD] f32 as attention_forward takes them; `work` is plan_attention_tiles' plan of
// these tokens on the device; scratch: attention_scratch_floats(T, NH, HD). Every token's own key and
// value must be in the pages already; the block size need not be a power of two.
void attention_forward_tiled(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens,
                             const AttentionWork& work, int64_t NH, float* scratch, cudaStream_t stream);

// Whether attention_forward_tiled_mma runs this cache on tensor cores: bf16 and fp8 caches of
// head_dim 16 to 128.
bool attention_mma_serves(int64_t HD, KvDtype dtype);

// attention_forward_tiled with both products on tensor cores (mma.sync, bf16 operands, f32
// accumulation; AttentionKernel::TiledMma) where attention_mma_serves, the same batch invariance,
// precision NMSE ≤ 1e-4 instead of 1e-7 (attention_mma.cu); f32 caches and head_dim 256 run
// attention_forward_tiled itself. The same plan, scratch and merge.
void attention_forward_tiled_mma(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens,
                                 const AttentionWork& work, int64_t NH, float* scratch, cudaStream_t stream);

}  // namespace s3::cuda
