// attention_tiles.cuh: device code the tiled attention kernels share (attention_tiled.cu with f32
// arithmetic, attention_mma.cu on tensor cores): cp.async copies, the row arithmetic of the online
// softmax both keep (see attention_tiled.cu's header), cache rows of a tile, the work item of a
// block, and the shared-memory opt-in of a launch. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/attention_tiled.h"
#include "cuda/check.h"

namespace s3::cuda::attention_tiles {

constexpr int kKeyTile = int(kTiledKeyTile);
constexpr int kMaxGroup = 8;

// ---- asynchronous copies (sm_80+) ---------------------------------------------------------------

__device__ inline void copy16_async(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global) : "memory");
}
__device__ inline void copy4_async(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(address), "l"(global) : "memory");
}
// The same for keys past a tile's end: 16 zero bytes (nothing is read from `global`).
__device__ inline void zero16_async(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 0;\n" ::"r"(address), "l"(global) : "memory");
}
__device__ inline void commit_async() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most kPending of this thread's copy groups are still in flight.
template <int kPending>
__device__ inline void wait_async() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---- the row arithmetic of every tiled kernel (attention_tiled.cu's header) -----------------------

template <typename KV>
constexpr bool kScaled = sizeof(KV) == 1;  // fp8 rows carry a scale

// A key's score from its dot product with the query.
template <typename KV>
__device__ inline float finish_score(float dot, float scale, float key_scale) {
  if constexpr (kScaled<KV>) return __fmul_rn(dot, __fmul_rn(scale, key_scale));
  return __fmul_rn(dot, scale);
}

// Moves the running maximum m to cover a tile whose visible scores peak at tile_max (−inf: no
// visible key); returns the factor that rescales l and o.
__device__ inline float advance_max(float& m, float tile_max) {
  if (tile_max == -INFINITY) return 1.0f;
  const float m_new = fmaxf(m, tile_max);
  const float factor = m == -INFINITY ? 0.0f : expf(__fsub_rn(m, m_new));
  m = m_new;
  return factor;
}

__device__ inline float key_weight(float score, float m) { return expf(__fsub_rn(score, m)); }

// The weight a key's (unscaled) value row is accumulated with.
template <typename KV>
__device__ inline float value_weight(float w, float value_scale) {
  if constexpr (kScaled<KV>) return __fmul_rn(w, value_scale);
  return w;
}

// ---- tiles of cached rows ------------------------------------------------------------------------

// Layer-local row of KV head `head` holding `key` (32-bit: the launcher checks the pool's rows fit).
__device__ inline int32_t cache_row(const DeviceKvPages& kv, const int32_t* table, int32_t key, int32_t head) {
  const int32_t block_size = int32_t(kv.block_size);
  return (table[key / block_size] * int32_t(kv.kv_heads) + head) * block_size + key % block_size;
}

// rows[i] = the row of key k0 + i for i < count, 0 up to kKeyTile (the block's threads share it).
__device__ inline void plan_rows(int32_t* rows, const DeviceKvPages& kv, const int32_t* table, int32_t k0, int count, int head) {
  for (int i = threadIdx.x; i < kKeyTile; i += blockDim.x) rows[i] = i < count ? cache_row(kv, table, k0 + i, head) : 0;
}

// Starts copying `count` cached rows (indices rows[0 .. count)) of `pool` into shared rows `stride`
// bytes apart, and their scales (fp8) into scale_dst; the caller commits the group.
template <typename KV, int HD, int kThreads>
__device__ inline void start_rows(uint8_t* dst, int stride, float* scale_dst, const void* pool, const float* scales,
                                  const int32_t* rows, int count) {
  constexpr int kRowBytes = HD * int(sizeof(KV));
  constexpr int kSegments = kRowBytes / 16;
  for (int i = threadIdx.x; i < count * kSegments; i += kThreads) {
    const int key = i / kSegments, part = i % kSegments;
    copy16_async(dst + key * stride + part * 16, static_cast<const uint8_t*>(pool) + int64_t(rows[key]) * kRowBytes + part * 16);
  }
  if constexpr (kScaled<KV>) {
    for (int key = threadIdx.x; key < count; key += kThreads) copy4_async(scale_dst + key, scales + rows[key]);
  }
}

// Whether the block's item is padding (count 0, pad_attention_plan): the block returns before anything else.
__device__ inline bool item_is_padding(const int32_t* items) { return items[3 * int64_t(blockIdx.x) + 1] == 0; }

// Which split of which tokens a block serves, and the positions that split covers.
struct Work {
  int first, count, split, begin, end;  // end: one past the last key of the split any row sees
  const int32_t* table;
};
__device__ inline Work item_work(const int32_t* items, const AttentionTokens& tokens) {
  const int32_t* item = items + 3 * int64_t(blockIdx.x);
  Work w;
  w.first = item[0];
  w.count = item[1];
  w.split = item[2];
  const int p_last = tokens.position[w.first + w.count - 1];
  const int length = int(attention_split_positions(p_last));
  w.begin = w.split * length;
  w.end = min(w.begin + length, p_last + 1);
  w.table = tokens.tables + tokens.table_offset[w.first];
  return w;
}

// ---- launches ------------------------------------------------------------------------------------

// Lets `kernel` use `bytes` of dynamic shared memory on the current device, or says why it cannot.
template <typename Kernel>
void allow_shared_memory(Kernel kernel, int bytes, const char* what) {
  int device = 0, limit = 0;
  check(cudaGetDevice(&device), what);
  check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), what);
  if (bytes > limit) {
    throw CudaError(std::string(what) + ": needs " + std::to_string(bytes) + " bytes of shared memory per block; cuda:" +
                    std::to_string(device) + " allows " + std::to_string(limit));
  }
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), what, {{"bytes", bytes}});
}

// Refuses, naming `what` and the sizes, what the tiled kernels cannot run: head shapes
// attention_forward_supports rejects, a missing plan, grids past CUDA's limits, pools of more than
// 2^31 rows per layer (the kernels index rows in 32 bits).
inline void check_tiled_launch(const char* what, const DeviceKvPages& kv, const AttentionTokens& tokens, const AttentionWork& work,
                               int64_t NH) {
  const std::string name = what;
  if (!attention_forward_supports(NH, kv.kv_heads, kv.head_dim)) {
    throw CudaError(name + ": " + std::to_string(NH) + " heads over " + std::to_string(kv.kv_heads) + " KV heads of head_dim " +
                    std::to_string(kv.head_dim) + " are not served; use attention_reference");
  }
  if (work.tile_items + work.single_items == 0 || work.items == nullptr) {
    throw CudaError(name + ": no work planned for " + std::to_string(tokens.T) + " tokens (plan_attention_tiles)");
  }
  if (work.tile_items + work.single_items > INT32_MAX || kv.kv_heads > 65535) {
    throw CudaError(name + ": " + std::to_string(work.tile_items + work.single_items) + " items over " + std::to_string(kv.kv_heads) +
                    " KV heads exceed the grid");
  }
  if (kv.block_size <= 0 || kv.num_blocks * kv.kv_heads * kv.block_size > INT32_MAX) {
    throw CudaError(name + ": " + std::to_string(kv.num_blocks) + " blocks of " + std::to_string(kv.block_size) + " positions × " +
                    std::to_string(kv.kv_heads) + " KV heads exceed 2^31 rows per layer");
  }
}

// Calls launch(std::integral_constant<int, HD>{}) for the head dimensions 16 … max_head_dim (powers of
// two) the kernels are compiled for; any other refused, naming `what`.
template <int kMaxHeadDim, typename Launch>
void for_head_dim(int64_t head_dim, const char* what, Launch&& launch) {
  switch (head_dim) {
    case 16: launch(std::integral_constant<int, 16>{}); return;
    case 32: launch(std::integral_constant<int, 32>{}); return;
    case 64: launch(std::integral_constant<int, 64>{}); return;
    case 128: launch(std::integral_constant<int, 128>{}); return;
    case 256:
      if constexpr (kMaxHeadDim >= 256) {
        launch(std::integral_constant<int, 256>{});
        return;
      }
      break;
    default: break;
  }
  throw CudaError(std::string(what) + ": head_dim " + std::to_string(head_dim) + " is not served");
}

}  // namespace s3::cuda::attention_tiles
