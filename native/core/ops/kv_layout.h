// ops/kv_layout.h: where a cached key or value row lives, shared by model/kv_cache (host memory)
// and cuda/kv_cache (device memory). One pool per layer and kind holds blocks × KV heads × positions
// of block_size rows of head_dim elements (vLLM's paged layout with each KV head's rows contiguous);
// FP8 row scales live in pools of the same layout with head_dim = 1.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

// Index of the row of (layer, block, KV head, offset within the block) counting rows over every
// layer: its element offset is that × head_dim, its scale's index that.
S3_HOST_DEVICE inline int64_t kv_row(int64_t layer, int64_t block, int64_t head, int64_t offset, int64_t num_blocks,
                                     int64_t kv_heads, int64_t block_size) {
  return ((layer * num_blocks + block) * kv_heads + head) * block_size + offset;
}

// The cache block holding `position` of a sequence whose block table is `table`.
S3_HOST_DEVICE inline int32_t kv_block_of(const int32_t* table, int64_t position, int64_t block_size) {
  return table[position / block_size];
}

}  // namespace s3::ops
