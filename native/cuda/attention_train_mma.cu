// The training attention on tensor cores; see attention_train_mma.h.
//
// Layout of every kernel: 4 warps, warp w owning rows 16w .. 16w + 15 of the block's 64 (query rows
// in the forward and dq, keys in dk/dv); lane 4·group + quad holds rows group and group + 8 of its
// warp (mma_bf16.cuh's fragments). The launchers first round q, k, v and dout to bf16 copies in the
// scratch; the operand tiles of a step are staged from those into shared memory (16-byte copies) and
// read with ldmatrix; the warp's own rows stay in registers where they are used every step (q and
// dout rows in the forward and dq).
// Each product is a sequence of m16n8k16 mma over 16-wide k chunks in increasing order, and an
// mma's output element depends only on its own row of A and column of B, so a row's bits do not
// depend on the other rows of its block.
#include <cuda_bf16.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/ops/packed_attention.h"
#include "cuda/attention_backward.h"
#include "cuda/attention_tiles.cuh"
#include "cuda/attention_train_mma.h"
#include "cuda/check.h"
#include "cuda/dtype_kernels.h"
#include "cuda/mma_bf16.cuh"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

using attention_tiles::advance_max;
using attention_tiles::allow_shared_memory;
using attention_tiles::for_head_dim;
using attention_tiles::key_weight;
using mma::a_rows_offset;
using mma::b_columns_offset;
using mma::b_rows_offset;
using mma::online_softmax_step;
using mma::load_matrices;
using mma::load_matrices_transposed;
using mma::mma_bf16;
using mma::pack_bf16;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlockRows = 16 * kWarps;  // query rows (forward, dq) or keys (dk, dv) of a block
constexpr int kForwardKeys = 64;         // keys per step of the forward
constexpr int kDqKeys = 32;              // keys per step of dq (its registers hold q, dout and dq rows)
constexpr int kDkvQueries = 32;          // query rows per step of dk, dv (registers hold dk and dv rows)
static_assert(kDkvQueries == 32, "dk, dv: lane j of a warp stands for query j of the tile");

// Bytes of one bf16 row in shared memory: 16 more than the row, so ldmatrix's 8 rows fall in 8
// different 16-byte bank groups.
template <int HD>
constexpr int kRowBytes = HD * 2 + 16;

struct Dims {
  int T, NH, NKV, G;
  int64_t n_seq;
  float scale;
  const int64_t* seq_begins;
  const int64_t* seq_parent;
};

Dims dims_of(const DevicePackedAttention& s) {
  return Dims{int(s.T), int(s.NH), int(s.NKV), int(s.NH / s.NKV), s.n_seq, 1.0f / std::sqrt(float(s.HD)), s.seq_begins,
              s.seq_parent};
}

// The keys one query row sees (ops::visible_keys), as ranges of absolute rows: [parent_begin,
// parent_end) and [own_begin, last]. last < 0: no row (past T), which sees nothing.
struct RowKeys {
  int parent_begin, parent_end, own_begin, last;
};

__device__ inline RowKeys row_keys(const Dims& dm, int64_t t) {
  if (t >= dm.T) return RowKeys{0, 0, 0, -1};
  const int64_t s = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, t);
  const ops::VisibleKeys keys = ops::visible_keys(dm.seq_begins, dm.seq_parent, s, t);
  return RowKeys{int(keys.parent_begin), int(keys.parent_begin + keys.parent_count), int(keys.own_begin), int(t)};
}

__device__ inline bool sees(const RowKeys& r, int key) {
  return (key >= r.parent_begin && key < r.parent_end) || (key >= r.own_begin && key <= r.last);
}

// Whether the row sees any key of [k0, k1).
__device__ inline bool sees_any(const RowKeys& r, int k0, int k1) {
  return (r.parent_begin < k1 && k0 < r.parent_end) || (r.own_begin <= r.last && r.own_begin < k1 && k0 <= r.last);
}

// The row's first visible key (INT_MAX for no row).
__device__ inline int first_key(const RowKeys& r) {
  if (r.last < 0) return INT_MAX;
  return r.parent_end > r.parent_begin ? r.parent_begin : r.own_begin;
}

__device__ inline RowKeys no_row() { return RowKeys{0, 0, 0, -1}; }

// The block's minimum (or maximum) of one int per thread; every thread gets it. `slots` is
// kWarps ints of shared memory; the block synchronizes inside.
__device__ inline int block_min(int value, int* slots) {
  value = __reduce_min_sync(kFullMask, value);
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = value;
  __syncthreads();
  int result = slots[0];
  for (int w = 1; w < kWarps; w++) result = min(result, slots[w]);
  __syncthreads();
  return result;
}
__device__ inline int block_max(int value, int* slots) { return -block_min(-value, slots); }

// Rows r0 .. r0 + kRows − 1 of head `head` of a [T × heads × HD] bf16 tensor into rows kRowBytes<HD>
// apart, 16 bytes per copy, zeros past T. The caller synchronizes.
template <int HD, int kRows>
__device__ inline void stage_rows(uint8_t* dst, const uint16_t* src, int r0, int T, int heads, int head) {
  constexpr int kSegments = HD / 8;
  for (int i = threadIdx.x; i < kRows * kSegments; i += kThreads) {
    const int r = i / kSegments, c = i % kSegments;
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (r0 + r < T) x = *reinterpret_cast<const uint4*>(src + ((int64_t(r0) + r) * heads + head) * HD + 8 * c);
    *reinterpret_cast<uint4*>(dst + r * kRowBytes<HD> + 16 * c) = x;
  }
}

// The A fragments (16 rows × HD) of this lane's rows straight from a bf16 tensor: `low` is row
// group's row, `high` row group + 8's (null: zeros).
template <int HD>
__device__ inline void load_row_fragments(uint32_t (&a)[HD / 16][4], const uint16_t* low, const uint16_t* high, int quad) {
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const uint16_t* row = h == 0 ? low : high;
#pragma unroll
    for (int c = 0; c < HD / 16; c++) {
      a[c][h] = row != nullptr ? *reinterpret_cast<const uint32_t*>(row + 16 * c + 2 * quad) : 0u;
      a[c][2 + h] = row != nullptr ? *reinterpret_cast<const uint32_t*>(row + 16 * c + 8 + 2 * quad) : 0u;
    }
  }
}

template <int N>
__device__ inline void clear(float (&acc)[N][4]) {
#pragma unroll
  for (int n = 0; n < N; n++) {
#pragma unroll
    for (int e = 0; e < 4; e++) acc[n][e] = 0.0f;
  }
}

// acc[n-tiles of the 16·kPairs columns] += A · Bᵀ, where A is a warp's 16 × HD rows and B's rows
// (the columns of the product) are rows c0 .. c0 + 16·kPairs − 1 of a staged tile: HD / 16 chunks
// of k in order. A comes from registers (a[chunk]).
template <int HD, int kPairs>
__device__ inline void product_with_rows(float (&acc)[2 * kPairs][4], const uint32_t (&a)[HD / 16][4], const uint8_t* tile,
                                         int lane) {
#pragma unroll
  for (int c = 0; c < HD / 16; c++) {
#pragma unroll
    for (int pair = 0; pair < kPairs; pair++) {
      uint32_t b[4];
      load_matrices(b, tile + b_rows_offset(lane, 16 * pair, 16 * c, kRowBytes<HD>));
      mma_bf16(acc[2 * pair], a[c], b[0], b[1]);
      mma_bf16(acc[2 * pair + 1], a[c], b[2], b[3]);
    }
  }
}

// The same with A read from a staged tile too (rows a0 .. a0 + 15).
template <int HD, int kPairs>
__device__ inline void product_of_tiles(float (&acc)[2 * kPairs][4], const uint8_t* a_tile, int a0, const uint8_t* tile, int lane) {
#pragma unroll
  for (int c = 0; c < HD / 16; c++) {
    uint32_t a[4];
    load_matrices(a, a_tile + a_rows_offset(lane, a0, 16 * c, kRowBytes<HD>));
#pragma unroll
    for (int pair = 0; pair < kPairs; pair++) {
      uint32_t b[4];
      load_matrices(b, tile + b_rows_offset(lane, 16 * pair, 16 * c, kRowBytes<HD>));
      mma_bf16(acc[2 * pair], a, b[0], b[1]);
      mma_bf16(acc[2 * pair + 1], a, b[2], b[3]);
    }
  }
}

// out[HD / 8 n-tiles] += W · tile, W the warp's 16 × (16·kChunks) f32 weights in accumulator layout
// (w[n-tile][e]) rounded to bf16, and `tile` kChunks × 16 staged rows of HD: the k chunks in order.
template <int HD, int kChunks>
__device__ inline void weigh_rows(float (&out)[HD / 8][4], const float (&w)[2 * kChunks][4], const uint8_t* tile, int lane) {
#pragma unroll
  for (int c = 0; c < kChunks; c++) {
    const uint32_t a[4] = {pack_bf16(w[2 * c][0], w[2 * c][1]), pack_bf16(w[2 * c][2], w[2 * c][3]),
                           pack_bf16(w[2 * c + 1][0], w[2 * c + 1][1]), pack_bf16(w[2 * c + 1][2], w[2 * c + 1][3])};
#pragma unroll
    for (int pair = 0; pair < HD / 16; pair++) {
      uint32_t b[4];
      load_matrices_transposed(b, tile + b_columns_offset(lane, 16 * c, 16 * pair, kRowBytes<HD>));
      mma_bf16(out[2 * pair], a, b[0], b[1]);
      mma_bf16(out[2 * pair + 1], a, b[2], b[3]);
    }
  }
}

// Writes this lane's part of rows `row[0]`, `row[1]` (group, group + 8; null: none) of an
// accumulator times `factor[h]`: lane quad holds columns 8n + 2·quad, + 1.
template <int HD>
__device__ inline void store_rows(float* const (&row)[2], const float (&acc)[HD / 8][4], const float (&factor)[2], int quad) {
#pragma unroll
  for (int h = 0; h < 2; h++) {
    if (row[h] == nullptr) continue;
#pragma unroll
    for (int n = 0; n < HD / 8; n++) {
      *reinterpret_cast<float2*>(row[h] + 8 * n + 2 * quad) =
          make_float2(__fmul_rn(acc[n][2 * h], factor[h]), __fmul_rn(acc[n][2 * h + 1], factor[h]));
    }
  }
}

// ---- forward ------------------------------------------------------------------------------------

// Block (64 query rows from r0, query head): the online softmax over 64-key tiles. Dynamic shared
// memory: the key and value tiles.
template <int HD>
__global__ void __launch_bounds__(kThreads) forward_kernel(float* out, float* lse, const uint16_t* q, const uint16_t* k,
                                                           const uint16_t* v, Dims dm) {
  constexpr int kStride = kRowBytes<HD>;
  extern __shared__ __align__(16) uint8_t smem[];
  uint8_t* k_s = smem;
  uint8_t* v_s = smem + kForwardKeys * kStride;
  __shared__ int slots[kWarps];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, group = lane >> 2, quad = lane & 3;
  const int r0 = int(blockIdx.x) * kBlockRows, head = int(blockIdx.y), kv_head = head / dm.G;

  RowKeys rows[2];
  const uint16_t* q_rows[2];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int t = r0 + 16 * warp + group + 8 * h;
    rows[h] = row_keys(dm, t);
    q_rows[h] = t < dm.T ? q + (int64_t(t) * dm.NH + head) * HD : nullptr;
  }
  uint32_t qa[HD / 16][4];
  load_row_fragments<HD>(qa, q_rows[0], q_rows[1], quad);
  // Threads 0 .. 63 stand for the block's rows when the block decides which key tiles to visit.
  const RowKeys mine = tid < kBlockRows ? row_keys(dm, int64_t(r0) + tid) : no_row();
  const int first = block_min(first_key(mine), slots);
  const int last_row = min(r0 + kBlockRows, dm.T) - 1;

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float o[HD / 8][4];
  clear(o);
  for (int k0 = first / kForwardKeys * kForwardKeys; k0 <= last_row; k0 += kForwardKeys) {
    const int k1 = k0 + kForwardKeys;
    // Also the barrier before the tiles are overwritten.
    if (!__syncthreads_or(sees_any(mine, k0, k1))) continue;
    stage_rows<HD, kForwardKeys>(k_s, k, k0, dm.T, dm.NKV, kv_head);
    stage_rows<HD, kForwardKeys>(v_s, v, k0, dm.T, dm.NKV, kv_head);
    __syncthreads();
    if (!__any_sync(kFullMask, sees_any(rows[0], k0, k1) || sees_any(rows[1], k0, k1))) continue;  // warp-uniform

    // Scores: n-tile t holds keys k0 + 8t + 2·quad + {0, 1} of rows group (s[t][0..1]) and group + 8.
    float s[kForwardKeys / 8][4];
    clear(s);
    product_with_rows<HD, kForwardKeys / 16>(s, qa, k_s, lane);
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
      for (int t = 0; t < kForwardKeys / 8; t++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          float& x = s[t][2 * h + e];
          x = sees(rows[h], k0 + 8 * t + 2 * quad + e) ? __fmul_rn(x, dm.scale) : -INFINITY;
        }
      }
    }
    online_softmax_step(s, m, l, o);
    weigh_rows<HD, kForwardKeys / 16>(o, s, v_s, lane);
  }

  // Every row sees its own key, so l > 0.
  float* out_rows[2] = {nullptr, nullptr};
  float inverse[2] = {0.0f, 0.0f};
#pragma unroll
  for (int h = 0; h < 2; h++) {
    if (rows[h].last < 0) continue;
    const int64_t t = rows[h].last;
    out_rows[h] = out + (t * dm.NH + head) * HD;
    inverse[h] = __frcp_rn(l[h]);
    if (quad == 0) lse[t * dm.NH + head] = __fadd_rn(m[h], logf(l[h]));
  }
  store_rows<HD>(out_rows, o, inverse, quad);
}

// ---- dq -----------------------------------------------------------------------------------------

// Block (64 query rows from r0, query head): dq over 32-key tiles. Dynamic shared memory: the key
// and value tiles.
template <int HD>
__global__ void __launch_bounds__(kThreads) dq_kernel(float* dq, const uint16_t* dout, const float* lse, const float* delta,
                                                      const uint16_t* q, const uint16_t* k, const uint16_t* v, Dims dm) {
  constexpr int kStride = kRowBytes<HD>;
  extern __shared__ __align__(16) uint8_t smem[];
  uint8_t* k_s = smem;
  uint8_t* v_s = smem + kDqKeys * kStride;
  __shared__ int slots[kWarps];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, group = lane >> 2, quad = lane & 3;
  const int r0 = int(blockIdx.x) * kBlockRows, head = int(blockIdx.y), kv_head = head / dm.G;

  RowKeys rows[2];
  const uint16_t *q_rows[2], *do_rows[2];
  float row_lse[2], row_delta[2];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int t = r0 + 16 * warp + group + 8 * h;
    rows[h] = row_keys(dm, t);
    const bool valid = t < dm.T;
    q_rows[h] = valid ? q + (int64_t(t) * dm.NH + head) * HD : nullptr;
    do_rows[h] = valid ? dout + (int64_t(t) * dm.NH + head) * HD : nullptr;
    row_lse[h] = valid ? lse[int64_t(t) * dm.NH + head] : 0.0f;
    row_delta[h] = valid ? delta[int64_t(t) * dm.NH + head] : 0.0f;
  }
  uint32_t qa[HD / 16][4], da[HD / 16][4];
  load_row_fragments<HD>(qa, q_rows[0], q_rows[1], quad);
  load_row_fragments<HD>(da, do_rows[0], do_rows[1], quad);
  const RowKeys mine = tid < kBlockRows ? row_keys(dm, int64_t(r0) + tid) : no_row();
  const int first = block_min(first_key(mine), slots);
  const int last_row = min(r0 + kBlockRows, dm.T) - 1;

  float acc[HD / 8][4];
  clear(acc);
  for (int k0 = first / kDqKeys * kDqKeys; k0 <= last_row; k0 += kDqKeys) {
    const int k1 = k0 + kDqKeys;
    if (!__syncthreads_or(sees_any(mine, k0, k1))) continue;
    stage_rows<HD, kDqKeys>(k_s, k, k0, dm.T, dm.NKV, kv_head);
    stage_rows<HD, kDqKeys>(v_s, v, k0, dm.T, dm.NKV, kv_head);
    __syncthreads();
    if (!__any_sync(kFullMask, sees_any(rows[0], k0, k1) || sees_any(rows[1], k0, k1))) continue;

    float s[kDqKeys / 8][4], dp[kDqKeys / 8][4];
    clear(s);
    clear(dp);
    product_with_rows<HD, kDqKeys / 16>(s, qa, k_s, lane);
    product_with_rows<HD, kDqKeys / 16>(dp, da, v_s, lane);
    // dS = P ∘ (dP − Δ), P = exp(score − lse) for visible keys, into s.
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
      for (int t = 0; t < kDqKeys / 8; t++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const bool visible = sees(rows[h], k0 + 8 * t + 2 * quad + e);
          const float p = visible ? expf(__fsub_rn(__fmul_rn(s[t][2 * h + e], dm.scale), row_lse[h])) : 0.0f;
          s[t][2 * h + e] = visible ? __fmul_rn(p, __fsub_rn(dp[t][2 * h + e], row_delta[h])) : 0.0f;
        }
      }
    }
    weigh_rows<HD, kDqKeys / 16>(acc, s, k_s, lane);
  }

  float* dq_rows[2] = {nullptr, nullptr};
#pragma unroll
  for (int h = 0; h < 2; h++) {
    if (rows[h].last >= 0) dq_rows[h] = dq + (int64_t(rows[h].last) * dm.NH + head) * HD;
  }
  const float factor[2] = {dm.scale, dm.scale};
  store_rows<HD>(dq_rows, acc, factor, quad);
}

// ---- dk, dv -------------------------------------------------------------------------------------

// Block (64 keys from k0, KV head): dk and dv over the 32-row query tiles that see a key of the
// block (from k0's tile to the end of the block's last sequence or of its last child), and within
// a tile the group's query heads in order. Dynamic shared memory: the key, value, query and dout
// tiles.
template <int HD>
__global__ void __launch_bounds__(kThreads) dkdv_kernel(float* dk, float* dv, const uint16_t* dout, const float* lse,
                                                        const float* delta, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                        Dims dm) {
  constexpr int kStride = kRowBytes<HD>;
  extern __shared__ __align__(16) uint8_t smem[];
  uint8_t* k_s = smem;
  uint8_t* v_s = k_s + kBlockRows * kStride;
  uint8_t* q_s = v_s + kBlockRows * kStride;
  uint8_t* do_s = q_s + kDkvQueries * kStride;
  __shared__ RowKeys queries_s[kDkvQueries];
  __shared__ float lse_s[kDkvQueries], delta_s[kDkvQueries];
  __shared__ int slots[kWarps];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, group = lane >> 2, quad = lane & 3;
  const int k0 = int(blockIdx.x) * kBlockRows, kv_head = int(blockIdx.y);
  const int key_end = min(k0 + kBlockRows, dm.T);

  stage_rows<HD, kBlockRows>(k_s, k, k0, dm.T, dm.NKV, kv_head);
  stage_rows<HD, kBlockRows>(v_s, v, k0, dm.T, dm.NKV, kv_head);
  // Queries after the block's last sequence see its keys only as children of one of its sequences.
  const int64_t s_first = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, k0);
  const int64_t s_last = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, key_end - 1);
  int query_end = int(dm.seq_begins[s_last + 1]);
  if (dm.seq_parent != nullptr) {
    for (int64_t c = s_last + 1 + tid; c < dm.n_seq; c += kThreads) {
      const int64_t parent = dm.seq_parent[c];
      if (parent >= s_first && parent <= s_last) query_end = max(query_end, int(dm.seq_begins[c + 1]));
    }
  }
  query_end = block_max(query_end, slots);  // also the barrier after the key and value tiles

  const int key[2] = {k0 + 16 * warp + group, k0 + 16 * warp + group + 8};
  float dka[HD / 8][4], dva[HD / 8][4];
  clear(dka);
  clear(dva);
  for (int q0 = k0 / kDkvQueries * kDkvQueries; q0 < query_end; q0 += kDkvQueries) {
    const RowKeys mine = tid < kDkvQueries ? row_keys(dm, int64_t(q0) + tid) : no_row();
    if (!__syncthreads_or(sees_any(mine, k0, key_end))) continue;
    if (tid < kDkvQueries) queries_s[tid] = mine;
    for (int i = 0; i < dm.G; i++) {
      const int head = kv_head * dm.G + i;
      stage_rows<HD, kDkvQueries>(q_s, q, q0, dm.T, dm.NH, head);
      stage_rows<HD, kDkvQueries>(do_s, dout, q0, dm.T, dm.NH, head);
      if (tid < kDkvQueries) {
        const bool valid = q0 + tid < dm.T;
        lse_s[tid] = valid ? lse[(int64_t(q0) + tid) * dm.NH + head] : 0.0f;
        delta_s[tid] = valid ? delta[(int64_t(q0) + tid) * dm.NH + head] : 0.0f;
      }
      __syncthreads();
      // Whether any query of the tile sees one of this warp's 16 keys (lane j stands for query j).
      if (__any_sync(kFullMask, sees_any(queries_s[lane], k0 + 16 * warp, k0 + 16 * warp + 16))) {
        // Sᵀ and dPᵀ: rows are this warp's keys, n-tile t holds queries q0 + 8t + 2·quad + {0, 1}.
        float st[kDkvQueries / 8][4], dpt[kDkvQueries / 8][4];
        clear(st);
        clear(dpt);
        product_of_tiles<HD, kDkvQueries / 16>(st, k_s, 16 * warp, q_s, lane);
        product_of_tiles<HD, kDkvQueries / 16>(dpt, v_s, 16 * warp, do_s, lane);
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
          for (int t = 0; t < kDkvQueries / 8; t++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
              const int j = 8 * t + 2 * quad + e;
              const bool visible = sees(queries_s[j], key[h]);
              const float p = visible ? expf(__fsub_rn(__fmul_rn(st[t][2 * h + e], dm.scale), lse_s[j])) : 0.0f;
              st[t][2 * h + e] = p;
              dpt[t][2 * h + e] = visible ? __fmul_rn(p, __fsub_rn(dpt[t][2 * h + e], delta_s[j])) : 0.0f;
            }
          }
        }
        weigh_rows<HD, kDkvQueries / 16>(dva, st, do_s, lane);
        weigh_rows<HD, kDkvQueries / 16>(dka, dpt, q_s, lane);
      }
      __syncthreads();  // the query tiles are free for the next head
    }
  }

  float* dk_rows[2] = {nullptr, nullptr};
  float* dv_rows[2] = {nullptr, nullptr};
#pragma unroll
  for (int h = 0; h < 2; h++) {
    if (key[h] < dm.T) {
      dk_rows[h] = dk + (int64_t(key[h]) * dm.NKV + kv_head) * HD;
      dv_rows[h] = dv + (int64_t(key[h]) * dm.NKV + kv_head) * HD;
    }
  }
  const float scale[2] = {dm.scale, dm.scale}, one[2] = {1.0f, 1.0f};
  store_rows<HD>(dk_rows, dka, scale, quad);
  store_rows<HD>(dv_rows, dva, one, quad);
}

// ---- launches -----------------------------------------------------------------------------------

template <int HD>
constexpr int kForwardShared = 2 * kForwardKeys * kRowBytes<HD>;
template <int HD>
constexpr int kDqShared = 2 * kDqKeys * kRowBytes<HD>;
template <int HD>
constexpr int kDkvShared = 2 * (kBlockRows + kDkvQueries) * kRowBytes<HD>;

void check_shape(const DevicePackedAttention& s, const char* what) {
  if (!attention_train_mma_supports(s.NH, s.NKV, s.HD) || s.T >= INT_MAX) {
    throw CudaError(describe(what, {{"T", s.T}, {"NH", s.NH}, {"NKV", s.NKV}, {"HD", s.HD}}) +
                    ": unsupported shape (needs NH a multiple of NKV, HD 16, 32, 64 or 128, T < 2^31)");
  }
  if ((s.T + kBlockRows - 1) / kBlockRows > INT_MAX || s.NH > 65535) {
    throw CudaError(describe(what, {{"T", s.T}, {"NH", s.NH}}) + ": the grid exceeds CUDA's limits");
  }
}

dim3 grid_of(int64_t T, int64_t heads) { return dim3(unsigned((T + kBlockRows - 1) / kBlockRows), unsigned(heads)); }

}  // namespace

bool attention_train_mma_supports(int64_t NH, int64_t NKV, int64_t HD) {
  return NKV > 0 && NH > 0 && NH % NKV == 0 && (HD == 16 || HD == 32 || HD == 64 || HD == 128);
}

bool train_attention_uses_mma() {
  static const bool uses = [] {
    const char* value = std::getenv("S3_CUDA_TRAIN_ATTENTION");
    const std::string text = value == nullptr ? "" : value;
    if (text.empty() || text == "f32") return false;
    if (text == "mma") return true;
    throw std::invalid_argument("S3_CUDA_TRAIN_ATTENTION is \"" + text + "\"; expected \"f32\" (the default) or \"mma\"");
  }();
  return uses;
}

namespace {

// The scratch: Δ [T × NH] f32, then bf16 copies of q, k, v and dout, each 256-byte aligned.
struct Scratch {
  float* delta;
  uint16_t *q, *k, *v, *dout;
};

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

Scratch scratch_of(void* base, const DevicePackedAttention& s) {
  const size_t qn = size_t(s.T * s.NH * s.HD), kn = size_t(s.T * s.NKV * s.HD);
  uint8_t* p = static_cast<uint8_t*>(base);
  Scratch out;
  out.delta = reinterpret_cast<float*>(p);
  p += aligned(sizeof(float) * size_t(s.T * s.NH));
  out.q = reinterpret_cast<uint16_t*>(p);
  p += aligned(2 * qn);
  out.k = reinterpret_cast<uint16_t*>(p);
  p += aligned(2 * kn);
  out.v = reinterpret_cast<uint16_t*>(p);
  p += aligned(2 * kn);
  out.dout = reinterpret_cast<uint16_t*>(p);
  return out;
}

}  // namespace

size_t attention_train_mma_scratch_bytes(int64_t T, int64_t NH, int64_t NKV, int64_t HD) {
  const size_t qn = size_t(T * NH * HD), kn = size_t(T * NKV * HD);
  return aligned(sizeof(float) * size_t(T * NH)) + 2 * aligned(2 * qn) + 2 * aligned(2 * kn);
}

void causal_attention_train_forward_mma(float* out, float* lse, const float* q, const float* k, const float* v,
                                        const DevicePackedAttention& shape, void* scratch, cudaStream_t stream) {
  check_shape(shape, "causal_attention_train_forward_mma");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const Shapes shapes{{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}};
  const Scratch bf16 = scratch_of(scratch, shape);
  f32_to_bf16(q, bf16.q, size_t(shape.T * shape.NH * shape.HD), stream);
  f32_to_bf16(k, bf16.k, size_t(shape.T * shape.NKV * shape.HD), stream);
  f32_to_bf16(v, bf16.v, size_t(shape.T * shape.NKV * shape.HD), stream);
  for_head_dim<128>(shape.HD, "causal_attention_train_forward_mma", [&](auto hd) {
    constexpr int HD = decltype(hd)::value;
    allow_shared_memory(forward_kernel<HD>, kForwardShared<HD>, "causal_attention_train_forward_mma");
    forward_kernel<HD><<<grid_of(shape.T, shape.NH), kThreads, kForwardShared<HD>, stream>>>(out, lse, bf16.q, bf16.k, bf16.v, dm);
  });
  check_launch("causal_attention_train_forward_mma", shapes);
}

void causal_attention_backward_mma(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                                   const float* q, const float* k, const float* v, const DevicePackedAttention& shape,
                                   void* scratch, cudaStream_t stream) {
  check_shape(shape, "causal_attention_backward_mma");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const Shapes shapes{{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}};
  const Scratch bf16 = scratch_of(scratch, shape);
  attention_row_deltas(bf16.delta, dout, out, shape.T * shape.NH, shape.HD, stream);
  f32_to_bf16(q, bf16.q, size_t(shape.T * shape.NH * shape.HD), stream);
  f32_to_bf16(k, bf16.k, size_t(shape.T * shape.NKV * shape.HD), stream);
  f32_to_bf16(v, bf16.v, size_t(shape.T * shape.NKV * shape.HD), stream);
  f32_to_bf16(dout, bf16.dout, size_t(shape.T * shape.NH * shape.HD), stream);
  for_head_dim<128>(shape.HD, "causal_attention_backward_mma", [&](auto hd) {
    constexpr int HD = decltype(hd)::value;
    allow_shared_memory(dq_kernel<HD>, kDqShared<HD>, "causal_attention_backward_mma (dq)");
    dq_kernel<HD><<<grid_of(shape.T, shape.NH), kThreads, kDqShared<HD>, stream>>>(dq, bf16.dout, lse, bf16.delta, bf16.q, bf16.k,
                                                                                   bf16.v, dm);
    check_launch("causal_attention_backward_mma (dq)", shapes);
    allow_shared_memory(dkdv_kernel<HD>, kDkvShared<HD>, "causal_attention_backward_mma (dk, dv)");
    dkdv_kernel<HD><<<grid_of(shape.T, shape.NKV), kThreads, kDkvShared<HD>, stream>>>(dk, dv, bf16.dout, lse, bf16.delta, bf16.q,
                                                                                       bf16.k, bf16.v, dm);
    check_launch("causal_attention_backward_mma (dk, dv)", shapes);
  });
}

}  // namespace s3::cuda
