// Tiled paged attention on tensor cores (AttentionKernel::TiledMma); see attention_tiled.h.
//
// The same work as attention_tiled.cu (its plan, splits, 64-position key tiles at absolute
// positions, scratch and merge), with the two products on mma.sync.m16n8k16 (bf16 in, f32
// accumulate) for bf16 and fp8 caches of head_dim ≤ 128. One kernel serves every item, with 4 warps
// of 16 query rows for a multi-row item (row r of the block is token first + r / G, query head
// head·G + r % G) and 1 warp for a single token (its G rows, the rest idle); a warp runs the same
// instructions on its rows either way, so the two launches give a row the same bits. Keys
// and values land in shared memory as bf16 rows padded to kill ldmatrix bank conflicts: bf16
// caches by 16-byte cp.async straight into them (positions past the tile's end zero-filled), fp8
// caches as raw bytes widened exactly to bf16 by all 128 threads (their row scales kept aside).
// Keys of tile i+1 load while tile i's values are used and the other way round, as in
// attention_tiled.cu. A warp whose rows see nothing of a tile skips it.
//
// Arithmetic of a row at position p over split c (positions [c·L, min((c+1)·L, p+1))), per tile of
// 64 absolute positions in order:
//   q rounded to bf16 once; S = Σ over 16-dim chunks d in order of mma(q[d chunk], key[d chunk])
//   (each mma sums 16 products in the tensor core's fixed order, f32), from 0; keys bf16 as cached,
//   fp8 decoded exactly, without their scales;
//   s_k = S_k · (1/√HD · key_scale_k) (the bracket rounded first, as in attention_tiled.cu);
//   tile maximum t over the row's visible keys (a 4-lane butterfly, order-free); the running maximum
//   and factor f as in attention_tiled.cu (advance_max); p_k = exp(s_k − m) for visible keys, else 0;
//   l = l·f + (Σ of the row's p: each lane adds its 16 in key order, then lanes (0+1) + (2+3));
//   o = o·f, then o += Σ over 16-key chunks in order of mma(bf16(p_k · value_scale_k), value rows).
// The state goes to the scratch (−0 written as +0) and attention_merge_splits folds the splits in
// order. Every sum above is fixed by key and dimension positions, and an m16n8k16 mma computes each
// output element from its own row of A and column of B only, so a row's bits depend on its own
// query, position and keys alone: the same in a prefill block, alone in a decode step and in any
// batch. One caveat the f32 kernels do not have: within a tile another row's newer keys enter this
// row's product with weight 0, so a NaN or inf in them (only a non-finite activation writes one)
// would reach it.
//
// Precision: q and the weights are rounded to bf16 (relative error 2^-9), so the output differs from
// the f32 kernels by about NMSE 1e-6..1e-5 (FlashAttention-2's bf16 class); the tests hold it to
// NMSE ≤ 1e-4 against the double reference. f32 caches, and head_dim 256, keep attention_tiled.cu's
// f32 kernels (attention_forward_tiled_mma hands them over).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <string>

#include "core/dtype.h"
#include "cuda/attention_tiled.h"
#include "cuda/attention_tiles.cuh"
#include "cuda/check.h"
#include "cuda/mma_bf16.cuh"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

using namespace attention_tiles;
using mma::load_matrices;
using mma::load_matrices_transposed;
using mma::mma_bf16;
using mma::online_softmax_step;
using mma::pack_bf16;

// ---- fp8 widening -------------------------------------------------------------------------------

// Two fp8 (e4m3) codes, the first in the low byte, as bf16 (exact: every e4m3 value is a bf16 value;
// one cvt on sm_89+, the shared decoder of core/dtype.h elsewhere).
__device__ inline uint32_t fp8x2_to_bf16x2(uint32_t two) {
#if __CUDA_ARCH__ >= 890
  const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two & 0xFFFFu), __NV_E4M3);
  const float2 pair = __half22float2(__half2(raw));
  return pack_bf16(pair.x, pair.y);
#else
  return pack_bf16(fp8e4m3_to_f32(uint8_t(two & 0xFFu)), fp8e4m3_to_f32(uint8_t((two >> 8) & 0xFFu)));
#endif
}

// ---- tiles -----------------------------------------------------------------------------------------

// kWarps warps of 16 query rows: 4 for multi-row items (attention_tiled_rows(HD) = 64 rows), 1 for
// single-token items (G ≤ 8 rows); a warp runs the same instructions on its rows either way.
template <typename KV, int HD, int kWarps>
struct MmaShape {
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kChunks = HD / 16;        // 16-dim chunks of the scores; 16-dim pairs of value n-tiles
  static constexpr int kKeyStride = HD * 2 + 16;  // bytes of a bf16 row: ldmatrix's 8 rows hit 8 bank groups
  static constexpr int kRawBytes = kScaled<KV> ? kKeyTile * HD : 0;  // fp8 staging per tile
  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = kKOffset + kKeyTile * kKeyStride;
  static constexpr int kRawKOffset = kVOffset + kKeyTile * kKeyStride;
  static constexpr int kRawVOffset = kRawKOffset + kRawBytes;
  static constexpr int kScaleOffset = kRawVOffset + kRawBytes;          // staged key, value scales; kept key, value scales
  static constexpr int kRowIndexOffset = kScaleOffset + 4 * kKeyTile * 4;  // two tiles' row indices
  static constexpr int kSharedBytes = kRowIndexOffset + 2 * kKeyTile * 4;
  static_assert(HD % 16 == 0 && HD <= 128, "head_dim a multiple of 16, at most 128");
  static_assert(kWarps == 1 || 16 * kWarps == attention_tiled_rows(HD), "the plan's rows per multi-row item");
};

// bf16 caches: starts copying keys [0, count) of a tile into bf16 rows kKeyStride apart, zeros past it.
template <int HD, int kThreads, int kStride>
__device__ inline void start_bf16_tile(uint8_t* dst, const void* pool, const int32_t* rows, int count) {
  constexpr int kRowBytes = HD * 2, kSegments = kRowBytes / 16;
  const uint8_t* base = static_cast<const uint8_t*>(pool);
  for (int i = threadIdx.x; i < kKeyTile * kSegments; i += kThreads) {
    const int key = i / kSegments, part = i % kSegments;
    uint8_t* to = dst + key * kStride + part * 16;
    if (key < count) {
      copy16_async(to, base + int64_t(rows[key]) * kRowBytes + part * 16);
    } else {
      zero16_async(to, base);
    }
  }
}

// fp8 caches: the staged tile (count rows of HD codes) widened into bf16 rows kKeyStride apart,
// zeros past it; its scales copied where the products read them.
template <int HD, int kThreads, int kStride>
__device__ inline void widen_fp8_tile(uint8_t* dst, float* scales, const uint8_t* raw, const float* raw_scales, int count) {
  constexpr int kPieces = HD / 8;  // 8 codes → 16 bytes of bf16
  for (int i = threadIdx.x; i < kKeyTile * kPieces; i += kThreads) {
    const int key = i / kPieces, piece = i % kPieces;
    uint4 out = make_uint4(0u, 0u, 0u, 0u);
    if (key < count) {
      const uint2 codes = *reinterpret_cast<const uint2*>(raw + key * HD + piece * 8);
      out = make_uint4(fp8x2_to_bf16x2(codes.x), fp8x2_to_bf16x2(codes.x >> 16), fp8x2_to_bf16x2(codes.y), fp8x2_to_bf16x2(codes.y >> 16));
    }
    *reinterpret_cast<uint4*>(dst + key * kStride + piece * 16) = out;
  }
  for (int key = threadIdx.x; key < kKeyTile; key += kThreads) scales[key] = key < count ? raw_scales[key] : 0.0f;
}

// ---- the kernel --------------------------------------------------------------------------------------

template <typename KV, int HD, int kWarps>
__global__ void __launch_bounds__(MmaShape<KV, HD, kWarps>::kThreads) mma_kernel(float* scratch, const float* q, DeviceKvPages kv,
                                                                        AttentionTokens tokens, const int32_t* items, int NH,
                                                                        float scale) {
  using S = MmaShape<KV, HD, kWarps>;
  constexpr int kC = S::kChunks;
  extern __shared__ __align__(16) uint8_t smem[];
  uint8_t* k_s = smem + S::kKOffset;
  uint8_t* v_s = smem + S::kVOffset;
  uint8_t* raw_k = smem + S::kRawKOffset;
  uint8_t* raw_v = smem + S::kRawVOffset;
  float* raw_key_scale_s = reinterpret_cast<float*>(smem + S::kScaleOffset);
  float* raw_value_scale_s = raw_key_scale_s + kKeyTile;
  float* key_scale_s = raw_key_scale_s + 2 * kKeyTile;
  float* value_scale_s = raw_key_scale_s + 3 * kKeyTile;
  int32_t* rows_s = reinterpret_cast<int32_t*>(smem + S::kRowIndexOffset);

  if (item_is_padding(items)) return;
  const Work work = item_work(items, tokens);
  const int head = blockIdx.y, G = NH / int(kv.kv_heads), rows = work.count * G;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, group = lane >> 2, quad = lane & 3;

  // This lane's rows (group and group + 8 of its warp's 16) and their query fragments in bf16.
  int position[2];
  uint32_t qa[kC][4];  // [chunk][rows group / group + 8, columns 2·quad; then columns 2·quad + 8]
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int r = 16 * warp + group + 8 * h;
    position[h] = r < rows ? tokens.position[work.first + r / G] : -1;
    const float* row = r < rows ? q + ((int64_t(work.first) + r / G) * NH + head * G + r % G) * HD : nullptr;
#pragma unroll
    for (int c = 0; c < kC; c++) {
      float2 low = make_float2(0.0f, 0.0f), high = make_float2(0.0f, 0.0f);
      if (row != nullptr) {
        low = *reinterpret_cast<const float2*>(row + 16 * c + 2 * quad);
        high = *reinterpret_cast<const float2*>(row + 16 * c + 8 + 2 * quad);
      }
      qa[c][h] = pack_bf16(low.x, low.y);
      qa[c][2 + h] = pack_bf16(high.x, high.y);
    }
  }
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float o[HD / 8][4];
#pragma unroll
  for (int n = 0; n < HD / 8; n++) {
#pragma unroll
    for (int e = 0; e < 4; e++) o[n][e] = 0.0f;
  }

  const int tiles = (work.end - work.begin + kKeyTile - 1) / kKeyTile;
  const int first_keys = min(kKeyTile, work.end - work.begin);
  plan_rows(rows_s, kv, work.table, work.begin, first_keys, head);
  __syncthreads();
  if constexpr (kScaled<KV>) {
    start_rows<KV, HD, S::kThreads>(raw_k, HD, raw_key_scale_s, kv.keys, kv.key_scales, rows_s, first_keys);
    commit_async();
    start_rows<KV, HD, S::kThreads>(raw_v, HD, raw_value_scale_s, kv.values, kv.value_scales, rows_s, first_keys);
    commit_async();
  } else {
    start_bf16_tile<HD, S::kThreads, S::kKeyStride>(k_s, kv.keys, rows_s, first_keys);
    commit_async();
    start_bf16_tile<HD, S::kThreads, S::kKeyStride>(v_s, kv.values, rows_s, first_keys);
    commit_async();
  }

  for (int tile = 0; tile < tiles; tile++) {
    const int k0 = work.begin + tile * kKeyTile;
    const int tile_keys = min(kKeyTile, work.end - k0);
    const int next_keys = min(kKeyTile, work.end - k0 - kKeyTile);  // ≤ 0 after the last tile
    int32_t* next_rows = rows_s + ((tile + 1) & 1) * kKeyTile;
    const int visible[2] = {max(0, min(tile_keys, position[0] + 1 - k0)), max(0, min(tile_keys, position[1] + 1 - k0))};
    const bool active = __any_sync(kFullMask, visible[0] > 0 || visible[1] > 0);  // warp-uniform
    wait_async<1>();  // this tile's keys
    __syncthreads();
    if constexpr (kScaled<KV>) {
      widen_fp8_tile<HD, S::kThreads, S::kKeyStride>(k_s, key_scale_s, raw_k, raw_key_scale_s, tile_keys);
      if (next_keys > 0) plan_rows(next_rows, kv, work.table, k0 + kKeyTile, next_keys, head);
      __syncthreads();  // the widened keys visible; the staging free
      if (next_keys > 0) start_rows<KV, HD, S::kThreads>(raw_k, HD, raw_key_scale_s, kv.keys, kv.key_scales, next_rows, next_keys);
      commit_async();
    } else {
      if (next_keys > 0) plan_rows(next_rows, kv, work.table, k0 + kKeyTile, next_keys, head);
    }

    // Scores: n-tile t holds keys 8t + 2·quad + {0, 1} of rows group (s[t][0..1]) and group + 8 (s[t][2..3]).
    float s[kKeyTile / 8][4];
    if (active) {
#pragma unroll
      for (int t = 0; t < kKeyTile / 8; t++) {
#pragma unroll
        for (int e = 0; e < 4; e++) s[t][e] = 0.0f;
      }
#pragma unroll
      for (int c = 0; c < kC; c++) {
#pragma unroll
        for (int pair = 0; pair < kKeyTile / 16; pair++) {
          // Matrices: keys 16·pair + 0..7 then 8..15, each at dims 16c + 0..7 and + 8..15.
          uint32_t b[4];
          load_matrices(b, k_s + mma::b_rows_offset(lane, 16 * pair, 16 * c, S::kKeyStride));
          mma_bf16(s[2 * pair], qa[c], b[0], b[1]);
          mma_bf16(s[2 * pair + 1], qa[c], b[2], b[3]);
        }
      }
      // Scaled scores (−inf past a row's visible keys), then the online-softmax step of rows group
      // (h = 0) and group + 8 (h = 1); a row's 64 scores sit in the 4 lanes of its group.
#pragma unroll
      for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int t = 0; t < kKeyTile / 8; t++) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int key = 8 * t + 2 * quad + e;
            float& x = s[t][2 * h + e];
            x = key < visible[h] ? finish_score<KV>(x, scale, kScaled<KV> ? key_scale_s[key] : 1.0f) : -INFINITY;
          }
        }
      }
      online_softmax_step(s, m, l, o);
    }

    if constexpr (kScaled<KV>) {
      wait_async<1>();  // this tile's values (the next keys may still be in flight)
      __syncthreads();
      widen_fp8_tile<HD, S::kThreads, S::kKeyStride>(v_s, value_scale_s, raw_v, raw_value_scale_s, tile_keys);
      __syncthreads();  // the widened values visible; the staging free
      if (next_keys > 0) start_rows<KV, HD, S::kThreads>(raw_v, HD, raw_value_scale_s, kv.values, kv.value_scales, next_rows, next_keys);
      commit_async();
    } else {
      wait_async<0>();  // this tile's values
      __syncthreads();  // the values and the next rows visible; the key tile is free
      if (next_keys > 0) start_bf16_tile<HD, S::kThreads, S::kKeyStride>(k_s, kv.keys, next_rows, next_keys);
      commit_async();
    }

    // Weighted values: 16-key chunk c of the weights is A (n-tiles 2c and 2c + 1 of s, as bf16).
    if (active) {
#pragma unroll
      for (int c = 0; c < kKeyTile / 16; c++) {
        const int key = 16 * c + 2 * quad;
        float scale0 = 1.0f, scale1 = 1.0f, scale8 = 1.0f, scale9 = 1.0f;
        if constexpr (kScaled<KV>) {
          scale0 = value_scale_s[key];
          scale1 = value_scale_s[key + 1];
          scale8 = value_scale_s[key + 8];
          scale9 = value_scale_s[key + 9];
        }
        const uint32_t pa[4] = {
            pack_bf16(value_weight<KV>(s[2 * c][0], scale0), value_weight<KV>(s[2 * c][1], scale1)),
            pack_bf16(value_weight<KV>(s[2 * c][2], scale0), value_weight<KV>(s[2 * c][3], scale1)),
            pack_bf16(value_weight<KV>(s[2 * c + 1][0], scale8), value_weight<KV>(s[2 * c + 1][1], scale9)),
            pack_bf16(value_weight<KV>(s[2 * c + 1][2], scale8), value_weight<KV>(s[2 * c + 1][3], scale9))};
#pragma unroll
        for (int pair = 0; pair < kC; pair++) {
          // Matrices (transposed): keys 16c + 0..7 then 8..15, at dims 16·pair + 0..7, then + 8..15.
          uint32_t b[4];
          load_matrices_transposed(b, v_s + mma::b_columns_offset(lane, 16 * c, 16 * pair, S::kKeyStride));
          mma_bf16(o[2 * pair], pa, b[0], b[1]);
          mma_bf16(o[2 * pair + 1], pa, b[2], b[3]);
        }
      }
    }
    if constexpr (!kScaled<KV>) {
      __syncthreads();  // the value tile is free
      if (next_keys > 0) start_bf16_tile<HD, S::kThreads, S::kKeyStride>(v_s, kv.values, next_rows, next_keys);
      commit_async();
    }
  }

  // Each row that sees this split leaves its state (m, l, o); lane quad holds dims 8n + 2·quad, + 1.
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int r = 16 * warp + group + 8 * h;
    if (r >= rows || position[h] < work.begin) continue;
    float* out = scratch + attention_partial_offset(work.first + r / G, head * G + r % G, work.split, NH, HD);
    if (quad == 0) {
      out[0] = m[h];
      out[1] = l[h];
    }
#pragma unroll
    for (int n = 0; n < HD / 8; n++) {
      *reinterpret_cast<float2*>(out + 2 + 8 * n + 2 * quad) =
          make_float2(__fadd_rn(o[n][2 * h], 0.0f), __fadd_rn(o[n][2 * h + 1], 0.0f));  // −0 → +0
    }
  }
}

// ---- launches ------------------------------------------------------------------------------------

template <typename KV, int HD, int kWarps>
void launch_mma_items(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, const int32_t* items,
                      int64_t count, int NH, float scale, cudaStream_t stream, const char* what) {
  if (count == 0) return;
  using S = MmaShape<KV, HD, kWarps>;
  allow_shared_memory(mma_kernel<KV, HD, kWarps>, S::kSharedBytes, what);
  const dim3 grid(unsigned(count), unsigned(kv.kv_heads));
  mma_kernel<KV, HD, kWarps><<<grid, S::kThreads, S::kSharedBytes, stream>>>(scratch, q, kv, tokens, items, NH, scale);
  check_launch(what, {{"items", count}, {"NH", NH}, {"NKV", kv.kv_heads}, {"HD", HD}, {"shared bytes", S::kSharedBytes}});
}

template <typename KV, int HD>
void launch_mma(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, const AttentionWork& work,
                int NH, float scale, cudaStream_t stream) {
  launch_mma_items<KV, HD, 4>(scratch, q, kv, tokens, work.items, work.tile_items, NH, scale, stream, "attention_forward_tiled_mma (rows)");
  launch_mma_items<KV, HD, 1>(scratch, q, kv, tokens, work.items + 3 * work.tile_items, work.single_items, NH, scale, stream,
                              "attention_forward_tiled_mma (single)");
}

template <typename KV>
void launch_mma_dims(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, const AttentionWork& work,
                     int NH, float scale, cudaStream_t stream) {
  for_head_dim<128>(kv.head_dim, "attention_forward_tiled_mma", [&](auto hd) {
    launch_mma<KV, decltype(hd)::value>(scratch, q, kv, tokens, work, NH, scale, stream);
  });
}

}  // namespace

bool attention_mma_serves(int64_t HD, KvDtype dtype) {
  return dtype != KvDtype::F32 && (HD == 16 || HD == 32 || HD == 64 || HD == 128);
}

void attention_forward_tiled_mma(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens,
                                 const AttentionWork& work, int64_t NH, float* scratch, cudaStream_t stream) {
  if (!attention_mma_serves(kv.head_dim, kv.dtype)) {
    attention_forward_tiled(out, q, kv, tokens, work, NH, scratch, stream);
    return;
  }
  if (tokens.T == 0) return;
  check_tiled_launch("attention_forward_tiled_mma", kv, tokens, work, NH);
  const float scale = 1.0f / std::sqrt(float(kv.head_dim));
  if (kv.dtype == KvDtype::Bf16) {
    launch_mma_dims<uint16_t>(scratch, q, kv, tokens, work, int(NH), scale, stream);
  } else {
    launch_mma_dims<uint8_t>(scratch, q, kv, tokens, work, int(NH), scale, stream);
  }
  attention_merge_splits(out, scratch, tokens, NH, kv.head_dim, stream);
}

}  // namespace s3::cuda
