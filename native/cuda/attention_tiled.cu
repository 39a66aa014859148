// Tiled paged attention (AttentionKernel::Tiled); see attention_tiled.h.
//
// Work. A query row is (token, query head); the G = NH / NKV rows of a token share a KV head. The
// host plans items (plan_attention_tiles); the grid is (item, KV head):
//   rows_kernel (prefill): up to attention_tiled_rows(HD) rows, i.e. up to 64 / G consecutive tokens
//     of one sequence, over one split of their keys. 128 threads; thread (tr, tc) = (tid / 8, tid % 8)
//     owns rows tr + 16·i, scores keys tc + 8·j of each tile and accumulates value dims
//     [tc·HD/8, (tc+1)·HD/8) of its rows, so a tile's keys and values are read from global memory once
//     per block and from shared memory by every row.
//   single_kernel (decode): the G rows of one token over one split. 64 threads; thread t scores key t
//     of each tile for all G heads, then accumulates HD/32 value dims (at least one) of its rows.
// Both stage a tile's keys and values (raw cache bytes, fp8 row scales beside them) in shared memory
// with 16-byte cp.async copies, 16-byte segments of consecutive rows going to consecutive threads
// (a 16-position cache block of one KV head is contiguous, so the reads coalesce). Keys of tile i+1
// load while tile i's values are used, values of tile i+1 while its keys are: one buffer each, always
// one copy group in flight. Splits a block does not finish are merged by attention_merge_splits.
//
// Arithmetic of a row at position p over split c (positions [c·L, min((c+1)·L, p+1)), L =
// attention_split_positions(p)), identical in both kernels, every reduction sequential:
//   state m = −inf, l = 0, o[0..HD) = 0; for each tile of 64 absolute positions [k0, k0 + 64) in order,
//   over its keys k visible to the row (c·L ≤ k ≤ p, k < (c+1)·L):
//     dot_k = fma chain over d = 0 .. HD−1 of q[d]·key_k[d] (f32; bf16 widened exactly; fp8 decoded
//             exactly, without its scale), starting from 0;
//     s_k = dot_k · (1/√HD · key_scale_k) (the product in brackets rounded first; key_scale 1 unless fp8);
//     t = max_k s_k; if the tile has a visible key: m' = max(m, t), f = (m = −inf ? 0 : exp(m − m')),
//       m = m'; else f = 1 and m stays;
//     w_k = exp(s_k − m); l = l·f, then l += w_k for k ascending; o[d] = o[d]·f, then
//     o[d] = fma(w_k · value_scale_k, value_k[d], o[d]) for k ascending (value_scale 1 unless fp8).
//   The state (m, l, o) goes to the scratch; the merge folds the splits in order (online_softmax.h)
//   and divides by l.
// Keys past the row's position are skipped, never multiplied by zero, so stale cache contents past a
// sequence's end (or another row's newer keys) cannot reach the row, and a tile a row cannot see
// leaves its state unchanged. The splits, the tiles and every order above depend only on absolute
// key positions and the row's own position: a token gets the same bits in a prefill block of 64 rows,
// alone in a decode step, through either kernel and in any batch. No atomics.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <string>

#include "core/dtype.h"
#include "cuda/attention_tiled.h"
#include "cuda/attention_tiles.cuh"
#include "cuda/check.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

using namespace attention_tiles;

// ---- cached elements widened to f32 (fp8 without its row scale) ----------------------------------

// Two fp8 (e4m3) codes, the first in the low byte, exactly (one cvt on sm_89+; the shared decoder
// of core/dtype.h elsewhere, not the toolkit's looping fallback).
__device__ inline float2 fp8x2_to_float2(uint32_t two) {
#if __CUDA_ARCH__ >= 890
  const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two & 0xFFFFu), __NV_E4M3);
  return __half22float2(__half2(raw));
#else
  return make_float2(fp8e4m3_to_f32(uint8_t(two & 0xFFu)), fp8e4m3_to_f32(uint8_t((two >> 8) & 0xFFu)));
#endif
}

// N consecutive elements at `src` (shared memory, aligned to N elements or 16 bytes).
template <int N>
__device__ inline void widen(const float* src, float (&out)[N]) {
  if constexpr (N >= 4) {
#pragma unroll
    for (int i = 0; i < N / 4; i++) {
      const float4 v = reinterpret_cast<const float4*>(src)[i];
      out[4 * i] = v.x;
      out[4 * i + 1] = v.y;
      out[4 * i + 2] = v.z;
      out[4 * i + 3] = v.w;
    }
  } else if constexpr (N == 2) {
    const float2 v = *reinterpret_cast<const float2*>(src);
    out[0] = v.x;
    out[1] = v.y;
  } else {
    out[0] = src[0];
  }
}
__device__ inline void widen_bf16_word(uint32_t word, float* out) {
  out[0] = __uint_as_float(word << 16);
  out[1] = __uint_as_float(word & 0xFFFF0000u);
}
template <int N>
__device__ inline void widen(const uint16_t* src, float (&out)[N]) {
  if constexpr (N >= 8) {
#pragma unroll
    for (int i = 0; i < N / 8; i++) {
      const uint4 v = reinterpret_cast<const uint4*>(src)[i];
      widen_bf16_word(v.x, out + 8 * i);
      widen_bf16_word(v.y, out + 8 * i + 2);
      widen_bf16_word(v.z, out + 8 * i + 4);
      widen_bf16_word(v.w, out + 8 * i + 6);
    }
  } else if constexpr (N == 4) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    widen_bf16_word(v.x, out);
    widen_bf16_word(v.y, out + 2);
  } else if constexpr (N == 2) {
    widen_bf16_word(*reinterpret_cast<const uint32_t*>(src), out);
  } else {
    out[0] = __uint_as_float(uint32_t(src[0]) << 16);
  }
}
__device__ inline void widen_fp8_word(uint32_t word, float* out) {
  const float2 low = fp8x2_to_float2(word), high = fp8x2_to_float2(word >> 16);
  out[0] = low.x;
  out[1] = low.y;
  out[2] = high.x;
  out[3] = high.y;
}
template <int N>
__device__ inline void widen(const uint8_t* src, float (&out)[N]) {
  if constexpr (N >= 16) {
#pragma unroll
    for (int i = 0; i < N / 16; i++) {
      const uint4 v = reinterpret_cast<const uint4*>(src)[i];
      widen_fp8_word(v.x, out + 16 * i);
      widen_fp8_word(v.y, out + 16 * i + 4);
      widen_fp8_word(v.z, out + 16 * i + 8);
      widen_fp8_word(v.w, out + 16 * i + 12);
    }
  } else if constexpr (N == 8) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    widen_fp8_word(v.x, out);
    widen_fp8_word(v.y, out + 4);
  } else if constexpr (N == 4) {
    widen_fp8_word(*reinterpret_cast<const uint32_t*>(src), out);
  } else if constexpr (N == 2) {
    const float2 v = fp8x2_to_float2(*reinterpret_cast<const uint16_t*>(src));
    out[0] = v.x;
    out[1] = v.y;
  } else {
    out[0] = fp8x2_to_float2(src[0]).x;
  }
}

// ---- the multi-row kernel (prefill) --------------------------------------------------------------

template <typename KV, int HD>
struct RowsShape {
  static constexpr int kThreads = 128;
  static constexpr int kRows = int(attention_tiled_rows(HD));
  static constexpr int kRowsPerThread = kRows / 16;  // rows tr + 16·i
  static constexpr int kKeysPerThread = kKeyTile / 8;  // keys tc + 8·j
  static constexpr int kDims = HD / 8;                 // value dims tc·kDims ..
  static constexpr int kRowBytes = HD * int(sizeof(KV));
  static constexpr int kKeyStride = kRowBytes + 16;  // padded: the 8 keys a warp reads at once hit 8 bank groups
  static constexpr int kQStride = HD + 4;            // floats
  static constexpr int kPStride = kKeyTile + 8;      // floats: conflict-free weight stores and loads
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kRows * kQStride * 4;
  static constexpr int kVOffset = kKOffset + kKeyTile * kKeyStride;
  static constexpr int kPOffset = kVOffset + kKeyTile * kRowBytes;
  static constexpr int kScaleOffset = kPOffset + kRows * kPStride * 4;  // key scales, then value scales
  static constexpr int kRowIndexOffset = kScaleOffset + 2 * kKeyTile * 4;  // two tiles' row indices
  static constexpr int kSharedBytes = kRowIndexOffset + 2 * kKeyTile * 4;
  static_assert(kRowBytes % 16 == 0 && kKOffset % 16 == 0 && kVOffset % 16 == 0 && kPOffset % 16 == 0, "16-byte rows");
};

template <typename KV, int HD>
__global__ void __launch_bounds__(RowsShape<KV, HD>::kThreads) rows_kernel(float* scratch, const float* q, DeviceKvPages kv,
                                                                          AttentionTokens tokens, const int32_t* items, int NH,
                                                                          float scale) {
  using S = RowsShape<KV, HD>;
  constexpr int kR = S::kRowsPerThread, kJ = S::kKeysPerThread, kD = S::kDims;
  extern __shared__ __align__(16) uint8_t smem[];
  float* q_s = reinterpret_cast<float*>(smem + S::kQOffset);
  uint8_t* k_s = smem + S::kKOffset;
  uint8_t* v_s = smem + S::kVOffset;
  float* p_s = reinterpret_cast<float*>(smem + S::kPOffset);
  float* key_scale_s = reinterpret_cast<float*>(smem + S::kScaleOffset);
  float* value_scale_s = key_scale_s + kKeyTile;
  int32_t* rows_s = reinterpret_cast<int32_t*>(smem + S::kRowIndexOffset);

  if (item_is_padding(items)) return;
  const Work work = item_work(items, tokens);
  const int head = blockIdx.y, G = NH / int(kv.kv_heads), rows = work.count * G;
  const int tid = threadIdx.x, tr = tid >> 3, tc = tid & 7;

  // The block's query rows: row r is token first + r / G, query head head·G + r % G; zero past `rows`.
  for (int i = tid; i < S::kRows * (HD / 4); i += S::kThreads) {
    const int r = i / (HD / 4), c = i % (HD / 4);
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows) value = reinterpret_cast<const float4*>(q + ((int64_t(work.first) + r / G) * NH + head * G + r % G) * HD)[c];
    *reinterpret_cast<float4*>(q_s + r * S::kQStride + 4 * c) = value;
  }
  int position[kR];
  float m[kR], l[kR], acc[kR][kD];
#pragma unroll
  for (int i = 0; i < kR; i++) {
    const int r = tr + 16 * i;
    position[i] = r < rows ? tokens.position[work.first + r / G] : -1;
    m[i] = -INFINITY;
    l[i] = 0.0f;
#pragma unroll
    for (int e = 0; e < kD; e++) acc[i][e] = 0.0f;
  }

  const int tiles = (work.end - work.begin + kKeyTile - 1) / kKeyTile;
  plan_rows(rows_s, kv, work.table, work.begin, min(kKeyTile, work.end - work.begin), head);
  __syncthreads();
  start_rows<KV, HD, S::kThreads>(k_s, S::kKeyStride, key_scale_s, kv.keys, kv.key_scales, rows_s, min(kKeyTile, work.end - work.begin));
  commit_async();
  start_rows<KV, HD, S::kThreads>(v_s, S::kRowBytes, value_scale_s, kv.values, kv.value_scales, rows_s, min(kKeyTile, work.end - work.begin));
  commit_async();

  for (int tile = 0; tile < tiles; tile++) {
    const int k0 = work.begin + tile * kKeyTile;
    const int tile_keys = min(kKeyTile, work.end - k0);
    const int next_keys = min(kKeyTile, work.end - k0 - kKeyTile);  // ≤ 0 after the last tile
    int32_t* next_rows = rows_s + ((tile + 1) & 1) * kKeyTile;
    int visible[kR];  // keys k0 .. k0 + visible − 1 of this tile are the row's
#pragma unroll
    for (int i = 0; i < kR; i++) visible[i] = max(0, min(tile_keys, position[i] + 1 - k0));
    wait_async<1>();  // this tile's keys
    __syncthreads();

    // Scores of rows tr + 16·i against keys tc + 8·j, each a sequential fma chain over d.
    float s[kR][kJ];
#pragma unroll
    for (int i = 0; i < kR; i++) {
#pragma unroll
      for (int j = 0; j < kJ; j++) s[i][j] = 0.0f;
    }
#pragma unroll 2
    for (int d0 = 0; d0 < HD; d0 += 8) {
      float qv[kR][8];
#pragma unroll
      for (int i = 0; i < kR; i++) widen<8>(q_s + (tr + 16 * i) * S::kQStride + d0, qv[i]);
#pragma unroll
      for (int j = 0; j < kJ; j++) {
        float kv8[8];
        widen<8>(reinterpret_cast<const KV*>(k_s + (tc + 8 * j) * S::kKeyStride) + d0, kv8);
#pragma unroll
        for (int i = 0; i < kR; i++) {
#pragma unroll
          for (int e = 0; e < 8; e++) s[i][j] = fmaf(qv[i][e], kv8[e], s[i][j]);
        }
      }
    }

    // The online-softmax step of each row: its 64 scores sit in the 8 lanes tc = 0 .. 7 of its tr.
#pragma unroll
    for (int i = 0; i < kR; i++) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kJ; j++) {
        const int key = tc + 8 * j;
        s[i][j] = key < visible[i] ? finish_score<KV>(s[i][j], scale, key_scale_s[key]) : -INFINITY;
        tile_max = fmaxf(tile_max, s[i][j]);
      }
#pragma unroll
      for (int lanes = 1; lanes < 8; lanes <<= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, lanes));
      const float factor = advance_max(m[i], tile_max);
#pragma unroll
      for (int j = 0; j < kJ; j++) {
        const int key = tc + 8 * j;
        p_s[(tr + 16 * i) * S::kPStride + key] = key < visible[i] ? key_weight(s[i][j], m[i]) : 0.0f;
      }
      l[i] = __fmul_rn(l[i], factor);
#pragma unroll
      for (int e = 0; e < kD; e++) acc[i][e] = __fmul_rn(acc[i][e], factor);
    }
    if (next_keys > 0) plan_rows(next_rows, kv, work.table, k0 + kKeyTile, next_keys, head);
    wait_async<0>();  // this tile's values
    __syncthreads();  // weights, values and the next rows visible; the key buffer is free
    if (next_keys > 0) start_rows<KV, HD, S::kThreads>(k_s, S::kKeyStride, key_scale_s, kv.keys, kv.key_scales, next_rows, next_keys);
    commit_async();

    // Weighted values: dims tc·kD .. of rows tr + 16·i, keys in order.
#pragma unroll 4
    for (int j = 0; j < tile_keys; j++) {
      float v[kD];
      widen<kD>(reinterpret_cast<const KV*>(v_s + j * S::kRowBytes) + tc * kD, v);
      const float value_scale = kScaled<KV> ? value_scale_s[j] : 1.0f;
#pragma unroll
      for (int i = 0; i < kR; i++) {
        if (j < visible[i]) {
          const float w = p_s[(tr + 16 * i) * S::kPStride + j];
          const float wv = value_weight<KV>(w, value_scale);
          l[i] = __fadd_rn(l[i], w);
#pragma unroll
          for (int e = 0; e < kD; e++) acc[i][e] = fmaf(wv, v[e], acc[i][e]);
        }
      }
    }
    __syncthreads();  // the value buffer and the weights are free
    if (next_keys > 0) start_rows<KV, HD, S::kThreads>(v_s, S::kRowBytes, value_scale_s, kv.values, kv.value_scales, next_rows, next_keys);
    commit_async();
  }

  // Each row that sees this split leaves its state (m, l, o).
#pragma unroll
  for (int i = 0; i < kR; i++) {
    const int r = tr + 16 * i;
    if (r >= rows || position[i] < work.begin) continue;
    float* out = scratch + attention_partial_offset(work.first + r / G, head * G + r % G, work.split, NH, HD);
    if (tc == 0) {
      out[0] = m[i];
      out[1] = l[i];
    }
#pragma unroll
    for (int e = 0; e < kD; e += 2) *reinterpret_cast<float2*>(out + 2 + tc * kD + e) = make_float2(acc[i][e], acc[i][e + 1]);
  }
}

// ---- the single-token kernel (decode) ------------------------------------------------------------

template <typename KV, int HD>
struct SingleShape {
  static constexpr int kThreads = kKeyTile;                    // one key per thread in the scores
  static constexpr int kDims = HD >= 64 ? HD / 32 : 1;         // value dims per thread
  static constexpr int kDimGroups = HD / kDims;                 // 16 or 32
  static constexpr int kRowSlots = kThreads / kDimGroups;       // 4 or 2
  static constexpr int kRowsPerThread = kMaxGroup / kRowSlots;  // rows slot + kRowSlots·k
  static constexpr int kRowBytes = HD * int(sizeof(KV));
  static constexpr int kKeyStride = kRowBytes + 16;
  static constexpr int kQOffset = 0;  // [kMaxGroup][HD] floats
  static constexpr int kKOffset = kQOffset + kMaxGroup * HD * 4;
  static constexpr int kVOffset = kKOffset + kKeyTile * kKeyStride;
  static constexpr int kPOffset = kVOffset + kKeyTile * kRowBytes;          // [kMaxGroup][kKeyTile]
  static constexpr int kScaleOffset = kPOffset + kMaxGroup * kKeyTile * 4;  // key scales, value scales
  static constexpr int kRowIndexOffset = kScaleOffset + 2 * kKeyTile * 4;
  static constexpr int kMaxOffset = kRowIndexOffset + 2 * kKeyTile * 4;  // [2 warps][kMaxGroup]
  static constexpr int kSharedBytes = kMaxOffset + 2 * kMaxGroup * 4;
  static_assert(kRowBytes % 16 == 0 && kKOffset % 16 == 0 && kVOffset % 16 == 0, "16-byte rows");
};

template <typename KV, int HD>
__global__ void __launch_bounds__(SingleShape<KV, HD>::kThreads) single_kernel(float* scratch, const float* q, DeviceKvPages kv,
                                                                              AttentionTokens tokens, const int32_t* items, int NH,
                                                                              float scale) {
  using S = SingleShape<KV, HD>;
  constexpr int kR = S::kRowsPerThread, kD = S::kDims;
  extern __shared__ __align__(16) uint8_t smem[];
  float* q_s = reinterpret_cast<float*>(smem + S::kQOffset);
  uint8_t* k_s = smem + S::kKOffset;
  uint8_t* v_s = smem + S::kVOffset;
  float* p_s = reinterpret_cast<float*>(smem + S::kPOffset);
  float* key_scale_s = reinterpret_cast<float*>(smem + S::kScaleOffset);
  float* value_scale_s = key_scale_s + kKeyTile;
  int32_t* rows_s = reinterpret_cast<int32_t*>(smem + S::kRowIndexOffset);
  float* max_s = reinterpret_cast<float*>(smem + S::kMaxOffset);

  if (item_is_padding(items)) return;
  const Work work = item_work(items, tokens);
  const int head = blockIdx.y, G = NH / int(kv.kv_heads);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int dim_group = tid % S::kDimGroups, slot = tid / S::kDimGroups;

  for (int i = tid; i < G * HD; i += S::kThreads) q_s[i] = q[(int64_t(work.first) * NH + head * G) * HD + i];
  float m[kMaxGroup], factor[kMaxGroup];
  float l[kR], acc[kR][kD];
#pragma unroll
  for (int g = 0; g < kMaxGroup; g++) {
    m[g] = -INFINITY;
    factor[g] = 1.0f;
  }
#pragma unroll
  for (int k = 0; k < kR; k++) {
    l[k] = 0.0f;
#pragma unroll
    for (int e = 0; e < kD; e++) acc[k][e] = 0.0f;
  }

  const int tiles = (work.end - work.begin + kKeyTile - 1) / kKeyTile;
  plan_rows(rows_s, kv, work.table, work.begin, min(kKeyTile, work.end - work.begin), head);
  __syncthreads();
  start_rows<KV, HD, S::kThreads>(k_s, S::kKeyStride, key_scale_s, kv.keys, kv.key_scales, rows_s, min(kKeyTile, work.end - work.begin));
  commit_async();
  start_rows<KV, HD, S::kThreads>(v_s, S::kRowBytes, value_scale_s, kv.values, kv.value_scales, rows_s, min(kKeyTile, work.end - work.begin));
  commit_async();

  for (int tile = 0; tile < tiles; tile++) {
    const int k0 = work.begin + tile * kKeyTile;
    const int tile_keys = min(kKeyTile, work.end - k0);
    const int next_keys = min(kKeyTile, work.end - k0 - kKeyTile);
    int32_t* next_rows = rows_s + ((tile + 1) & 1) * kKeyTile;
    const bool visible = tid < tile_keys;
    wait_async<1>();
    __syncthreads();

    // Key tid's score for every head of the group.
    float s[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) s[g] = 0.0f;
#pragma unroll 2
    for (int d0 = 0; d0 < HD; d0 += 8) {
      float kv8[8];
      widen<8>(reinterpret_cast<const KV*>(k_s + tid * S::kKeyStride) + d0, kv8);
#pragma unroll
      for (int g = 0; g < kMaxGroup; g++) {
        if (g < G) {
          float qv[8];
          widen<8>(q_s + g * HD + d0, qv);
#pragma unroll
          for (int e = 0; e < 8; e++) s[g] = fmaf(qv[e], kv8[e], s[g]);
        }
      }
    }
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) {
      if (g >= G) continue;
      s[g] = visible ? finish_score<KV>(s[g], scale, key_scale_s[tid]) : -INFINITY;
      float warp_peak = s[g];
#pragma unroll
      for (int lanes = 1; lanes < 32; lanes <<= 1) warp_peak = fmaxf(warp_peak, __shfl_xor_sync(kFullMask, warp_peak, lanes));
      if (lane == 0) max_s[warp * kMaxGroup + g] = warp_peak;
    }
    if (next_keys > 0) plan_rows(next_rows, kv, work.table, k0 + kKeyTile, next_keys, head);
    wait_async<0>();
    __syncthreads();  // the warps' maxima, the values and the next rows visible; the key buffer is free
    if (next_keys > 0) start_rows<KV, HD, S::kThreads>(k_s, S::kKeyStride, key_scale_s, kv.keys, kv.key_scales, next_rows, next_keys);
    commit_async();
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) {
      if (g >= G) continue;
      factor[g] = advance_max(m[g], fmaxf(max_s[g], max_s[kMaxGroup + g]));
      p_s[g * kKeyTile + tid] = visible ? key_weight(s[g], m[g]) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kR; k++) {
      const int row = slot + S::kRowSlots * k;
      float f = 1.0f;
#pragma unroll
      for (int g = 0; g < kMaxGroup; g++) f = g == row ? factor[g] : f;  // constant indices: no local memory
      l[k] = __fmul_rn(l[k], f);
#pragma unroll
      for (int e = 0; e < kD; e++) acc[k][e] = __fmul_rn(acc[k][e], f);
    }
    __syncthreads();  // the weights visible

#pragma unroll 4
    for (int j = 0; j < tile_keys; j++) {
      float v[kD];
      widen<kD>(reinterpret_cast<const KV*>(v_s + j * S::kRowBytes) + dim_group * kD, v);
      const float value_scale = kScaled<KV> ? value_scale_s[j] : 1.0f;
#pragma unroll
      for (int k = 0; k < kR; k++) {
        const int row = slot + S::kRowSlots * k;
        if (row < G) {
          const float w = p_s[row * kKeyTile + j];
          const float wv = value_weight<KV>(w, value_scale);
          l[k] = __fadd_rn(l[k], w);
#pragma unroll
          for (int e = 0; e < kD; e++) acc[k][e] = fmaf(wv, v[e], acc[k][e]);
        }
      }
    }
    __syncthreads();  // the value buffer and the weights are free
    if (next_keys > 0) start_rows<KV, HD, S::kThreads>(v_s, S::kRowBytes, value_scale_s, kv.values, kv.value_scales, next_rows, next_keys);
    commit_async();
  }

#pragma unroll
  for (int k = 0; k < kR; k++) {
    const int row = slot + S::kRowSlots * k;
    if (row >= G) continue;
    float* out = scratch + attention_partial_offset(work.first, head * G + row, work.split, NH, HD);
    if (dim_group == 0) {
      float row_m = -INFINITY;
#pragma unroll
      for (int g = 0; g < kMaxGroup; g++) row_m = g == row ? m[g] : row_m;
      out[0] = row_m;
      out[1] = l[k];
    }
    if constexpr (kD >= 2) {
#pragma unroll
      for (int e = 0; e < kD; e += 2) *reinterpret_cast<float2*>(out + 2 + dim_group * kD + e) = make_float2(acc[k][e], acc[k][e + 1]);
    } else {
      out[2 + dim_group] = acc[k][0];
    }
  }
}

// ---- launches ------------------------------------------------------------------------------------

template <typename KV, int HD>
void launch_tiled(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, const AttentionWork& work,
                  int NH, float scale, cudaStream_t stream) {
  if (work.tile_items > 0) {
    using S = RowsShape<KV, HD>;
    allow_shared_memory(rows_kernel<KV, HD>, S::kSharedBytes, "attention_forward_tiled (rows)");
    const dim3 grid(unsigned(work.tile_items), unsigned(kv.kv_heads));
    rows_kernel<KV, HD><<<grid, S::kThreads, S::kSharedBytes, stream>>>(scratch, q, kv, tokens, work.items, NH, scale);
    check_launch("attention_forward_tiled (rows)",
                 {{"items", work.tile_items}, {"NH", NH}, {"NKV", kv.kv_heads}, {"HD", HD}, {"shared bytes", S::kSharedBytes}});
  }
  if (work.single_items > 0) {
    using S = SingleShape<KV, HD>;
    allow_shared_memory(single_kernel<KV, HD>, S::kSharedBytes, "attention_forward_tiled (single)");
    const dim3 grid(unsigned(work.single_items), unsigned(kv.kv_heads));
    single_kernel<KV, HD><<<grid, S::kThreads, S::kSharedBytes, stream>>>(scratch, q, kv, tokens, work.items + 3 * work.tile_items,
                                                                          NH, scale);
    check_launch("attention_forward_tiled (single)",
                 {{"items", work.single_items}, {"NH", NH}, {"NKV", kv.kv_heads}, {"HD", HD}, {"shared bytes", S::kSharedBytes}});
  }
}

template <typename KV>
void launch_tiled_dims(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens,
                       const AttentionWork& work, int NH, float scale, cudaStream_t stream) {
  for_head_dim<256>(kv.head_dim, "attention_forward_tiled", [&](auto hd) {
    launch_tiled<KV, decltype(hd)::value>(scratch, q, kv, tokens, work, NH, scale, stream);
  });
}

}  // namespace

void attention_forward_tiled(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens,
                             const AttentionWork& work, int64_t NH, float* scratch, cudaStream_t stream) {
  if (tokens.T == 0) return;
  check_tiled_launch("attention_forward_tiled", kv, tokens, work, NH);
  const float scale = 1.0f / std::sqrt(float(kv.head_dim));
  switch (kv.dtype) {
    case KvDtype::F32: launch_tiled_dims<float>(scratch, q, kv, tokens, work, int(NH), scale, stream); break;
    case KvDtype::Bf16: launch_tiled_dims<uint16_t>(scratch, q, kv, tokens, work, int(NH), scale, stream); break;
    case KvDtype::Fp8E4M3: launch_tiled_dims<uint8_t>(scratch, q, kv, tokens, work, int(NH), scale, stream); break;
  }
  attention_merge_splits(out, scratch, tokens, NH, kv.head_dim, stream);
}

}  // namespace s3::cuda
