// The device KV cache and its store kernel; see kv_cache.h.
#include "core/dtype.h"
#include "core/ops/fp8_rows.h"
#include "core/ops/kv_layout.h"
#include "cuda/check.h"
#include "cuda/kv_cache.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

// One warp per (token, KV head, keys or values) row of HD values.
__global__ void kv_store_kernel(DeviceKvPages pages, const float* k, const float* v, const int64_t* rows, int64_t T) {
  const int64_t NKV = pages.kv_heads, HD = pages.head_dim;
  const int64_t item = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);  // over T × NKV × 2
  const int lane = threadIdx.x & 31;
  if (item >= T * NKV * 2) return;
  const bool is_value = item % 2 == 1;
  const int64_t head = (item / 2) % NKV, t = item / 2 / NKV;
  if (rows[t] < 0) return;  // a padding row of a replayed decode step: nothing to store (whole warp)
  const float* src = (is_value ? v : k) + (t * NKV + head) * HD;
  const int64_t row = rows[t] + head * pages.block_size;
  void* pool = is_value ? pages.values : pages.keys;
  switch (pages.dtype) {
    case KvDtype::F32:
      for (int64_t d = lane; d < HD; d += 32) static_cast<float*>(pool)[row * HD + d] = src[d];
      break;
    case KvDtype::Bf16:
      for (int64_t d = lane; d < HD; d += 32) static_cast<uint16_t*>(pool)[row * HD + d] = f32_to_bf16(src[d]);
      break;
    case KvDtype::Fp8E4M3: {
      float max_abs = 0.0f;
      bool finite = true;
      for (int64_t d = lane; d < HD; d += 32) {
        finite = finite && isfinite(src[d]);
        max_abs = fmaxf(max_abs, fabsf(src[d]));
      }
      max_abs = warp_max(max_abs);
      finite = __all_sync(kFullMask, finite);
      const float scale = ops::fp8_row_scale(max_abs, finite);
      for (int64_t d = lane; d < HD; d += 32) static_cast<uint8_t*>(pool)[row * HD + d] = ops::fp8_row_encode(src[d], scale, finite);
      if (lane == 0) (is_value ? pages.value_scales : pages.key_scales)[row] = scale;
      break;
    }
  }
}

}  // namespace

int64_t DeviceKvCache::bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t block_size, int64_t num_blocks,
                             KvDtype dtype) {
  return 2 * layers * num_blocks * kv_heads * block_size * (head_dim * kv_dtype_size(dtype) + kv_row_scale_bytes(dtype));
}

DeviceKvCache::DeviceKvCache(DeviceAllocator& allocator, int64_t layers, int64_t kv_heads, int64_t head_dim,
                             int64_t block_size, int64_t num_blocks, KvDtype dtype, cudaStream_t stream)
    : layers_(layers), kv_heads_(kv_heads), head_dim_(head_dim), block_size_(block_size), num_blocks_(num_blocks), dtype_(dtype) {
  const size_t rows = size_t(layers * num_blocks * kv_heads * block_size);
  const size_t pool = rows * size_t(head_dim * kv_dtype_size(dtype));
  keys_ = DeviceBuffer(allocator, pool, "the KV cache's keys");
  values_ = DeviceBuffer(allocator, pool, "the KV cache's values");
  // All-zero bits are 0.0 in f32, bf16 and fp8 alike (a scale of 0 is never read before a store).
  check(cudaMemsetAsync(keys_.get(), 0, pool, stream), "zeroing the KV cache", {{"bytes", int64_t(pool)}});
  check(cudaMemsetAsync(values_.get(), 0, pool, stream), "zeroing the KV cache", {{"bytes", int64_t(pool)}});
  if (dtype == KvDtype::Fp8E4M3) {
    key_scales_ = DeviceBuffer(allocator, rows * sizeof(float), "the FP8 KV cache's key scales");
    value_scales_ = DeviceBuffer(allocator, rows * sizeof(float), "the FP8 KV cache's value scales");
    check(cudaMemsetAsync(key_scales_.get(), 0, rows * sizeof(float), stream), "zeroing the KV cache scales");
    check(cudaMemsetAsync(value_scales_.get(), 0, rows * sizeof(float), stream), "zeroing the KV cache scales");
  }
}

DeviceKvPages DeviceKvCache::pages(int64_t layer) const {
  const int64_t row = ops::kv_row(layer, 0, 0, 0, num_blocks_, kv_heads_, block_size_);
  const int64_t offset = row * head_dim_ * kv_dtype_size(dtype_);
  DeviceKvPages p;
  p.keys = keys_.get<uint8_t>() + offset;
  p.values = values_.get<uint8_t>() + offset;
  if (dtype_ == KvDtype::Fp8E4M3) {
    p.key_scales = key_scales_.get<float>() + row;
    p.value_scales = value_scales_.get<float>() + row;
  }
  p.num_blocks = num_blocks_;
  p.kv_heads = kv_heads_;
  p.block_size = block_size_;
  p.head_dim = head_dim_;
  p.dtype = dtype_;
  return p;
}

void kv_store(const DeviceKvPages& pages, const float* k, const float* v, const int64_t* rows, int64_t T, cudaStream_t stream) {
  const int64_t items = T * pages.kv_heads * 2;
  if (items == 0) return;
  constexpr int kWarps = 8;
  kv_store_kernel<<<blocks_for(items, kWarps), 32 * kWarps, 0, stream>>>(pages, k, v, rows, T);
  check_launch("kv_store", {{"T", T}, {"NKV", pages.kv_heads}, {"HD", pages.head_dim}});
}

}  // namespace s3::cuda
