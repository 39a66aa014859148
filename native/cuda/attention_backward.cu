// Training attention on the device, forward and backward; see attention_backward.h. The kernels are
// compiled once per group size G = NH / NKV (1 .. kAttentionTrainMaxGroup), so a thread keeps its G
// heads' sums in registers.
#include <cmath>
#include <type_traits>

#include "core/ops/packed_attention.h"
#include "cuda/attention_backward.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kTile = kAttentionTrainTile;
constexpr int kMaxG = int(kAttentionTrainMaxGroup);
constexpr int kWarps = kTile / 32;
// The per-row dot products (a thread per key or query row of the tile) read their rows from shared
// memory, staged kStageColumns columns (one 128-byte line of f32) at a time: a warp loads a row's
// slice with one coalesced instruction, where each thread reading its own row from global memory made
// every load instruction touch 32 lines. The extra float of the stride puts the 32 rows a warp reads
// at one column in 32 different banks.
constexpr int kStageColumns = 32;
constexpr int kStageStride = kStageColumns + 1;
constexpr int kStageFloats = kTile * kStageStride;

struct Dims {
  int64_t T, NH, NKV, HD, n_seq;
  int G;
  float scale;
  const int64_t* seq_begins;
  const int64_t* seq_parent;
};

Dims dims_of(const DevicePackedAttention& s) {
  return Dims{s.T, s.NH, s.NKV, s.HD, s.n_seq, int(s.NH / s.NKV), 1.0f / std::sqrt(float(s.HD)), s.seq_begins, s.seq_parent};
}

// Columns [c0, c0 + width) of the tile's first `rows` rows into stage [kTile × kStageStride]; row jj
// starts at src + row_start(jj). The caller synchronizes before the slice is read.
template <typename RowStart>
__device__ inline void stage_columns(float* stage, const float* src, const RowStart& row_start, int64_t rows, int64_t c0,
                                     int width) {
  for (int idx = threadIdx.x; idx < kTile * kStageColumns; idx += kTile) {
    const int jj = idx / kStageColumns, d = idx % kStageColumns;
    if (jj < rows && d < width) stage[jj * kStageStride + d] = src[row_start(jj) + c0 + d];
  }
}

// sums[i] = fmaf(vectors[i × stride + d], row[d], sums[i]) for d in [0, width), i < G. Every dot
// product of these kernels is one such chain from 0.0f over d = 0 .. HD − 1 in increasing order, a
// slice after the other: that order fixes its bits.
template <int G>
__device__ inline void dot_slice(float (&sums)[G], const float* row, const float* vectors, int64_t stride, int width) {
  if (width == kStageColumns) {
#pragma unroll 8
    for (int d = 0; d < kStageColumns; d++) {
      const float x = row[d];
#pragma unroll
      for (int i = 0; i < G; i++) sums[i] = fmaf(vectors[i * stride + d], x, sums[i]);
    }
  } else {
    for (int d = 0; d < width; d++) {
      const float x = row[d];
#pragma unroll
      for (int i = 0; i < G; i++) sums[i] = fmaf(vectors[i * stride + d], x, sums[i]);
    }
  }
}

__device__ inline ops::VisibleKeys keys_of(const Dims& dm, int64_t t) {
  const int64_t s = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, t);
  return ops::visible_keys(dm.seq_begins, dm.seq_parent, s, t);
}

// The rows of the visible keys tile .. tile + kTile − 1 (ops::visible_key_row): two runs of
// consecutive rows, the parent's keys then the sequence's own, so key tile + jj is row
// (jj < split ? first_parent : first_own) + jj.
struct TileKeys {
  int64_t split, first_parent, first_own;
  __device__ int64_t row(int64_t jj) const { return (jj < split ? first_parent : first_own) + jj; }
};

__device__ inline TileKeys tile_keys_of(const ops::VisibleKeys& keys, int64_t tile) {
  const int64_t split = keys.parent_count - tile;
  return TileKeys{split < 0 ? 0 : split, keys.parent_begin + tile, keys.own_begin + tile - keys.parent_count};
}

// Block (t, g): rows t of the G query heads of KV head g. Dynamic shared memory: q_s [G × HD],
// acc_s [G × HD], p_s [G × kTile], k_stage [kStageFloats].
template <int G>
__global__ void __launch_bounds__(kTile) forward_kernel(float* out, float* lse, const float* q, const float* k,
                                                        const float* v, Dims dm) {
  extern __shared__ float smem[];
  __shared__ float reduce_s[kWarps * G];
  __shared__ float factor_s[G];
  const int64_t t = blockIdx.x, g = blockIdx.y, HD = dm.HD;
  float* q_s = smem;
  float* acc_s = q_s + G * HD;
  float* p_s = acc_s + G * HD;
  float* k_stage = p_s + G * kTile;
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) {
    q_s[i] = q[(t * dm.NH + g * G) * HD + i];
    acc_s[i] = 0.0f;
  }
  const ops::VisibleKeys keys = keys_of(dm, t);
  float m[G], l[G];
#pragma unroll
  for (int i = 0; i < G; i++) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
  }
  for (int64_t tile = 0; tile < keys.count; tile += kTile) {
    const int64_t j = tile + threadIdx.x;
    const int64_t tile_keys = keys.count - tile < kTile ? keys.count - tile : kTile;
    const TileKeys rows = tile_keys_of(keys, tile);
    const auto key_start = [&](int64_t jj) { return (rows.row(jj) * dm.NKV + g) * HD; };
    float qk[G];
#pragma unroll
    for (int i = 0; i < G; i++) qk[i] = 0.0f;
    for (int64_t c0 = 0; c0 < HD; c0 += kStageColumns) {
      const int width = HD - c0 < kStageColumns ? int(HD - c0) : kStageColumns;
      stage_columns(k_stage, k, key_start, tile_keys, c0, width);
      __syncthreads();  // (also, on the first tile, orders the q_s and acc_s writes before the reads)
      if (j < keys.count) dot_slice<G>(qk, k_stage + threadIdx.x * kStageStride, q_s + c0, HD, width);
      __syncthreads();  // the slice is rewritten next
    }
    float score[G], tile_max[G];
#pragma unroll
    for (int i = 0; i < G; i++) score[i] = -INFINITY;
    if (j < keys.count) {
#pragma unroll
      for (int i = 0; i < G; i++) score[i] = qk[i] * dm.scale;
    }
#pragma unroll
    for (int i = 0; i < G; i++) tile_max[i] = score[i];
    block_reduce_each<true>(tile_max, G, reduce_s);
    float w[G];
#pragma unroll
    for (int i = 0; i < G; i++) {
      const float m_new = fmaxf(m[i], tile_max[i]);  // finite: the tile's first key is visible
      const float factor = m[i] == -INFINITY ? 0.0f : expf(m[i] - m_new);
      w[i] = j < keys.count ? expf(score[i] - m_new) : 0.0f;
      p_s[i * kTile + threadIdx.x] = w[i];
      if (threadIdx.x == 0) factor_s[i] = factor;
      l[i] *= factor;
      m[i] = m_new;
    }
    block_reduce_each<false>(w, G, reduce_s);  // also orders the p_s and factor_s writes before the reads below
#pragma unroll
    for (int i = 0; i < G; i++) l[i] += w[i];
    // Column d of the G heads' sums, each chained over the tile's keys in order; a value read serves
    // all G heads.
    for (int64_t d = threadIdx.x; d < HD; d += kTile) {
      float a[G];
#pragma unroll
      for (int i = 0; i < G; i++) a[i] = acc_s[i * HD + d] * factor_s[i];
      for (int64_t jj = 0; jj < tile_keys; jj++) {
        const float x = v[key_start(jj) + d];
#pragma unroll
        for (int i = 0; i < G; i++) a[i] = fmaf(p_s[i * kTile + jj], x, a[i]);
      }
#pragma unroll
      for (int i = 0; i < G; i++) acc_s[i * HD + d] = a[i];
    }
    __syncthreads();  // p_s and factor_s are rewritten by the next tile
  }
  for (int64_t idx = threadIdx.x; idx < G * HD; idx += kTile) {
    const int64_t i = idx / HD, d = idx % HD;
    float total = 0.0f;
#pragma unroll
    for (int ii = 0; ii < G; ii++) total = ii == i ? l[ii] : total;
    out[(t * dm.NH + g * G + i) * HD + d] = acc_s[idx] / total;
  }
#pragma unroll
  for (int i = 0; i < G; i++) {
    if (threadIdx.x == 0) lse[t * dm.NH + g * G + i] = m[i] + logf(l[i]);
  }
}

// delta[t × NH + h] = Σ_d dout·out: a warp per (t, h).
__global__ void delta_kernel(float* delta, const float* dout, const float* out, int64_t rows, int64_t HD) {
  const int64_t row = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int64_t d = lane; d < HD; d += 32) sum = fmaf(dout[row * HD + d], out[row * HD + d], sum);
  sum = warp_sum(sum);
  if (lane == 0) delta[row] = sum;
}

// Block (t, g): dq of row t's G query heads. Dynamic shared memory: q_s, do_s, dq_s [G × HD],
// ds_s [G × kTile], k_stage and v_stage [kStageFloats].
template <int G>
__global__ void __launch_bounds__(kTile) dq_kernel(float* dq, const float* dout, const float* lse, const float* delta,
                                                   const float* q, const float* k, const float* v, Dims dm) {
  extern __shared__ float smem[];
  const int64_t t = blockIdx.x, g = blockIdx.y, HD = dm.HD;
  float* q_s = smem;
  float* do_s = q_s + G * HD;
  float* dq_s = do_s + G * HD;
  float* ds_s = dq_s + G * HD;
  float* k_stage = ds_s + G * kTile;
  float* v_stage = k_stage + kStageFloats;
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) {
    q_s[i] = q[(t * dm.NH + g * G) * HD + i];
    do_s[i] = dout[(t * dm.NH + g * G) * HD + i];
    dq_s[i] = 0.0f;
  }
  const ops::VisibleKeys keys = keys_of(dm, t);
  for (int64_t tile = 0; tile < keys.count; tile += kTile) {
    const int64_t j = tile + threadIdx.x;
    const int64_t tile_keys = keys.count - tile < kTile ? keys.count - tile : kTile;
    const TileKeys rows = tile_keys_of(keys, tile);
    const auto key_start = [&](int64_t jj) { return (rows.row(jj) * dm.NKV + g) * HD; };
    // Per head, q·k and dout·v of the thread's key.
    float qk[G], dov[G];
#pragma unroll
    for (int i = 0; i < G; i++) {
      qk[i] = 0.0f;
      dov[i] = 0.0f;
    }
    for (int64_t c0 = 0; c0 < HD; c0 += kStageColumns) {
      const int width = HD - c0 < kStageColumns ? int(HD - c0) : kStageColumns;
      stage_columns(k_stage, k, key_start, tile_keys, c0, width);
      stage_columns(v_stage, v, key_start, tile_keys, c0, width);
      __syncthreads();  // (also, on the first tile, orders the q_s, do_s and dq_s writes before the reads)
      if (j < keys.count) {
        dot_slice<G>(qk, k_stage + threadIdx.x * kStageStride, q_s + c0, HD, width);
        dot_slice<G>(dov, v_stage + threadIdx.x * kStageStride, do_s + c0, HD, width);
      }
      __syncthreads();  // the slices are rewritten next
    }
    if (j < keys.count) {
#pragma unroll
      for (int i = 0; i < G; i++) {
        const int64_t h = g * G + i;
        const float p = expf(qk[i] * dm.scale - lse[t * dm.NH + h]);
        ds_s[i * kTile + threadIdx.x] = p * (dov[i] - delta[t * dm.NH + h]) * dm.scale;
      }
    }
    __syncthreads();
    // Column d of the G heads' dq, each chained over the tile's keys in order.
    for (int64_t d = threadIdx.x; d < HD; d += kTile) {
      float a[G];
#pragma unroll
      for (int i = 0; i < G; i++) a[i] = dq_s[i * HD + d];
      for (int64_t jj = 0; jj < tile_keys; jj++) {
        const float x = k[key_start(jj) + d];
#pragma unroll
        for (int i = 0; i < G; i++) a[i] = fmaf(ds_s[i * kTile + jj], x, a[i]);
      }
#pragma unroll
      for (int i = 0; i < G; i++) dq_s[i * HD + d] = a[i];
    }
    __syncthreads();  // ds_s is rewritten by the next tile
  }
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) dq[(t * dm.NH + g * G) * HD + i] = dq_s[i];
}

// The queries of rows [begin, end), a tile at a time, added into dk_s and dv_s (key row r of KV head
// g held in k_s, v_s). p_s, ds_s: [G × kTile]; q_stage, do_stage: [kStageFloats].
template <int G>
__device__ void dkdv_segment(float* dk_s, float* dv_s, float* p_s, float* ds_s, float* q_stage, float* do_stage,
                             const float* k_s, const float* v_s, int64_t begin, int64_t end, const float* dout,
                             const float* lse, const float* delta, const float* q, int64_t g, const Dims& dm) {
  const int64_t HD = dm.HD;
  for (int64_t tile = begin; tile < end; tile += kTile) {
    const int64_t t = tile + threadIdx.x;
    const int64_t tile_queries = end - tile < kTile ? end - tile : kTile;
    for (int i = 0; i < G; i++) {
      const int64_t h = g * G + i;
      const auto query_start = [&](int64_t jj) { return ((tile + jj) * dm.NH + h) * HD; };
      // q·k and dout·v of the thread's query.
      float qk = 0.0f, dov = 0.0f;
      for (int64_t c0 = 0; c0 < HD; c0 += kStageColumns) {
        const int width = HD - c0 < kStageColumns ? int(HD - c0) : kStageColumns;
        stage_columns(q_stage, q, query_start, tile_queries, c0, width);
        stage_columns(do_stage, dout, query_start, tile_queries, c0, width);
        __syncthreads();
        if (t < end) {
          const float* q_row = q_stage + threadIdx.x * kStageStride;
          const float* do_row = do_stage + threadIdx.x * kStageStride;
#pragma unroll 8
          for (int d = 0; d < width; d++) {
            qk = fmaf(q_row[d], k_s[c0 + d], qk);
            dov = fmaf(do_row[d], v_s[c0 + d], dov);
          }
        }
        __syncthreads();  // the slices are rewritten next
      }
      if (t < end) {
        const float p = expf(qk * dm.scale - lse[t * dm.NH + h]);
        p_s[i * kTile + threadIdx.x] = p;
        ds_s[i * kTile + threadIdx.x] = p * (dov - delta[t * dm.NH + h]) * dm.scale;
      }
    }
    __syncthreads();
    for (int64_t d = threadIdx.x; d < HD; d += kTile) {
      float ak = dk_s[d], av = dv_s[d];
      for (int64_t jj = 0; jj < tile_queries; jj++) {
#pragma unroll
        for (int i = 0; i < G; i++) {
          const int64_t at = ((tile + jj) * dm.NH + g * G + i) * HD + d;
          ak = fmaf(ds_s[i * kTile + jj], q[at], ak);
          av = fmaf(p_s[i * kTile + jj], dout[at], av);
        }
      }
      dk_s[d] = ak;
      dv_s[d] = av;
    }
    __syncthreads();  // p_s and ds_s are rewritten by the next tile
  }
}

// Block (r, g): dk and dv of key row r of KV head g, over every query that sees it. Dynamic shared
// memory: k_s, v_s, dk_s, dv_s [HD], p_s, ds_s [G × kTile], q_stage, do_stage [kStageFloats].
template <int G>
__global__ void __launch_bounds__(kTile) dkdv_kernel(float* dk, float* dv, const float* dout, const float* lse,
                                                     const float* delta, const float* q, const float* k, const float* v,
                                                     Dims dm) {
  extern __shared__ float smem[];
  const int64_t r = blockIdx.x, g = blockIdx.y, HD = dm.HD;
  float* k_s = smem;
  float* v_s = k_s + HD;
  float* dk_s = v_s + HD;
  float* dv_s = dk_s + HD;
  float* p_s = dv_s + HD;
  float* ds_s = p_s + G * kTile;
  float* q_stage = ds_s + G * kTile;
  float* do_stage = q_stage + kStageFloats;
  for (int64_t d = threadIdx.x; d < HD; d += kTile) {
    k_s[d] = k[(r * dm.NKV + g) * HD + d];
    v_s[d] = v[(r * dm.NKV + g) * HD + d];
    dk_s[d] = 0.0f;
    dv_s[d] = 0.0f;
  }
  __syncthreads();
  const int64_t s = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, r);
  // r's own sequence sees it from row r on; then each child of s sees all of s.
  dkdv_segment<G>(dk_s, dv_s, p_s, ds_s, q_stage, do_stage, k_s, v_s, r, dm.seq_begins[s + 1], dout, lse, delta, q, g, dm);
  if (dm.seq_parent != nullptr) {
    for (int64_t c = s + 1; c < dm.n_seq; c++) {
      if (dm.seq_parent[c] == s) {
        dkdv_segment<G>(dk_s, dv_s, p_s, ds_s, q_stage, do_stage, k_s, v_s, dm.seq_begins[c], dm.seq_begins[c + 1], dout, lse,
                        delta, q, g, dm);
      }
    }
  }
  for (int64_t d = threadIdx.x; d < HD; d += kTile) {
    dk[(r * dm.NKV + g) * HD + d] = dk_s[d];
    dv[(r * dm.NKV + g) * HD + d] = dv_s[d];
  }
}

// launch(std::integral_constant<int, G>()) for the group size G (1 .. kMaxG, as check_shape allows).
template <typename Launch>
void for_group(int G, const Launch& launch) {
  static_assert(kMaxG == 8, "for_group lists the group sizes 1 .. 8");
  switch (G) {
    case 1: launch(std::integral_constant<int, 1>()); break;
    case 2: launch(std::integral_constant<int, 2>()); break;
    case 3: launch(std::integral_constant<int, 3>()); break;
    case 4: launch(std::integral_constant<int, 4>()); break;
    case 5: launch(std::integral_constant<int, 5>()); break;
    case 6: launch(std::integral_constant<int, 6>()); break;
    case 7: launch(std::integral_constant<int, 7>()); break;
    default: launch(std::integral_constant<int, 8>()); break;
  }
}

// Dynamic shared memory past the default 48 KiB has to be allowed per kernel (dq takes 62 KiB at a
// group of 8 and HD 256).
template <typename Kernel>
void allow_shared_bytes(Kernel kernel, size_t bytes, const char* what, Shapes shapes) {
  if (bytes > (size_t(48) << 10)) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), what, shapes);
  }
}

void check_shape(const DevicePackedAttention& s, const char* what) {
  if (!attention_train_supports(s.NH, s.NKV, s.HD)) {
    throw CudaError(describe(what, {{"NH", s.NH}, {"NKV", s.NKV}, {"HD", s.HD}}) +
                    ": unsupported head shape (needs NH a multiple of NKV, NH/NKV <= 8, HD <= 256)");
  }
}

}  // namespace

bool attention_train_supports(int64_t NH, int64_t NKV, int64_t HD) {
  return NKV > 0 && NH % NKV == 0 && NH / NKV <= kAttentionTrainMaxGroup && HD > 0 && HD <= kAttentionTrainMaxHeadDim;
}

size_t attention_backward_scratch_bytes(int64_t T, int64_t NH) { return sizeof(float) * size_t(T * NH > 0 ? T * NH : 1); }

void attention_row_deltas(float* delta, const float* dout, const float* out, int64_t rows, int64_t HD, cudaStream_t stream) {
  if (rows == 0) return;
  delta_kernel<<<blocks_for(rows, kWarps), kTile, 0, stream>>>(delta, dout, out, rows, HD);
  check_launch("attention_row_deltas", {{"rows", rows}, {"HD", HD}});
}

void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const DevicePackedAttention& shape, cudaStream_t stream) {
  check_shape(shape, "causal_attention_train_forward");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const Shapes shapes{{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}};
  const dim3 grid(unsigned(shape.T), unsigned(shape.NKV));
  const size_t shared = sizeof(float) * size_t(2 * dm.G * dm.HD + dm.G * kTile + kStageFloats);
  for_group(dm.G, [&](auto group) {
    constexpr int G = decltype(group)::value;
    allow_shared_bytes(forward_kernel<G>, shared, "causal_attention_train_forward (shared memory)", shapes);
    forward_kernel<G><<<grid, kTile, shared, stream>>>(out, lse, q, k, v, dm);
  });
  check_launch("causal_attention_train_forward", shapes);
}

void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const DevicePackedAttention& shape,
                               void* scratch, cudaStream_t stream) {
  check_shape(shape, "causal_attention_backward");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const Shapes shapes{{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}};
  float* delta = static_cast<float*>(scratch);
  attention_row_deltas(delta, dout, out, shape.T * shape.NH, shape.HD, stream);
  const dim3 grid(unsigned(shape.T), unsigned(shape.NKV));
  const size_t dq_shared = sizeof(float) * size_t(3 * dm.G * dm.HD + dm.G * kTile + 2 * kStageFloats);
  const size_t dkdv_shared = sizeof(float) * size_t(4 * dm.HD + 2 * dm.G * kTile + 2 * kStageFloats);
  for_group(dm.G, [&](auto group) {
    constexpr int G = decltype(group)::value;
    allow_shared_bytes(dq_kernel<G>, dq_shared, "causal_attention_backward (dq shared memory)", shapes);
    dq_kernel<G><<<grid, kTile, dq_shared, stream>>>(dq, dout, lse, delta, q, k, v, dm);
    check_launch("causal_attention_backward (dq)", shapes);
    allow_shared_bytes(dkdv_kernel<G>, dkdv_shared, "causal_attention_backward (dk, dv shared memory)", shapes);
    dkdv_kernel<G><<<grid, kTile, dkdv_shared, stream>>>(dk, dv, dout, lse, delta, q, k, v, dm);
    check_launch("causal_attention_backward (dk, dv)", shapes);
  });
}

}  // namespace s3::cuda
