// kv_cache.h: the paged KV cache in device memory, the CUDA twin of model/kv_cache.h: the same
// layout (core/ops/kv_layout.h), the same element types (core/kv_dtype.h) and FP8 convention (one
// f32 scale per position and KV head, core/ops/fp8_rows.h), so the bytes a step writes are the CPU's
// for the same keys and values. The block manager's block ids index it unchanged.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/kv_dtype.h"
#include "cuda/device_memory.h"

namespace s3::cuda {

// One layer's pages on the device (pointers at the layer's first row).
struct DeviceKvPages {
  void* keys = nullptr;           // [num_blocks × NKV × block_size × HD] of dtype
  void* values = nullptr;
  float* key_scales = nullptr;    // fp8 only: [num_blocks × NKV × block_size]
  float* value_scales = nullptr;
  int64_t num_blocks = 0, kv_heads = 0, block_size = 0, head_dim = 0;
  KvDtype dtype = KvDtype::F32;
};

class DeviceKvCache {
 public:
  // Allocates (zero-filled) layers × num_blocks blocks; throws DeviceOutOfMemory naming the bytes.
  DeviceKvCache(DeviceAllocator& allocator, int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t block_size,
                int64_t num_blocks, KvDtype dtype, cudaStream_t stream);

  DeviceKvPages pages(int64_t layer) const;
  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  KvDtype dtype() const { return dtype_; }
  // Bytes it holds over every layer, keys, values and scales.
  static int64_t bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t block_size, int64_t num_blocks, KvDtype dtype);

 private:
  int64_t layers_, kv_heads_, head_dim_, block_size_, num_blocks_;
  KvDtype dtype_;
  DeviceBuffer keys_, values_, key_scales_, value_scales_;
};

// Writes T new tokens' keys and values of one layer: k, v: [T × NKV × HD] f32; rows: [T], token t's
// row of KV head 0 in the layer's pools (kv_row(0, block, 0, offset)); head h's row is rows[t] +
// h × block_size. A token whose row is negative is skipped (the padding rows of a decode step
// replayed through a CUDA graph, model/qwen3_step_bookkeeping.h).
void kv_store(const DeviceKvPages& pages, const float* k, const float* v, const int64_t* rows, int64_t T, cudaStream_t stream);

}  // namespace s3::cuda
