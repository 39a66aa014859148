// Training attention on the device, forward and backward; see attention_backward.h.
#include <cmath>

#include "core/ops/packed_attention.h"
#include "cuda/attention_backward.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kTile = kAttentionTrainTile;
constexpr int kMaxG = int(kAttentionTrainMaxGroup);
constexpr int kWarps = kTile / 32;

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

// Σ a[d]·b[d] over HD values, in increasing d (a in shared or global memory).
__device__ inline float dot(const float* a, const float* b, int64_t HD) {
  float sum = 0.0f;
  for (int64_t d = 0; d < HD; d++) sum = fmaf(a[d], b[d], sum);
  return sum;
}

__device__ inline ops::VisibleKeys keys_of(const Dims& dm, int64_t t) {
  const int64_t s = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, t);
  return ops::visible_keys(dm.seq_begins, dm.seq_parent, s, t);
}

// Block (t, g): rows t of the G query heads of KV head g. Dynamic shared memory: q_s [G × HD],
// acc_s [G × HD], p_s [G × kTile].
__global__ void __launch_bounds__(kTile) forward_kernel(float* out, float* lse, const float* q, const float* k,
                                                        const float* v, Dims dm) {
  extern __shared__ float smem[];
  __shared__ float reduce_s[kWarps * kMaxG];
  __shared__ float factor_s[kMaxG];
  const int64_t t = blockIdx.x, g = blockIdx.y, HD = dm.HD;
  const int G = dm.G;
  float* q_s = smem;
  float* acc_s = q_s + G * HD;
  float* p_s = acc_s + G * HD;
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) {
    q_s[i] = q[(t * dm.NH + g * G) * HD + i];
    acc_s[i] = 0.0f;
  }
  __syncthreads();
  const ops::VisibleKeys keys = keys_of(dm, t);
  float m[kMaxG], l[kMaxG];
#pragma unroll
  for (int i = 0; i < kMaxG; i++) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
  }
  for (int64_t tile = 0; tile < keys.count; tile += kTile) {
    const int64_t j = tile + threadIdx.x;
    float score[kMaxG], tile_max[kMaxG];
#pragma unroll
    for (int i = 0; i < kMaxG; i++) score[i] = -INFINITY;
    if (j < keys.count) {
      const float* kr = k + (ops::visible_key_row(keys, j) * dm.NKV + g) * HD;
#pragma unroll
      for (int i = 0; i < kMaxG; i++) {
        if (i < G) score[i] = dot(q_s + i * HD, kr, HD) * dm.scale;
      }
    }
#pragma unroll
    for (int i = 0; i < kMaxG; i++) tile_max[i] = score[i];
    block_reduce_each<true>(tile_max, G, reduce_s);
    float w[kMaxG];
#pragma unroll
    for (int i = 0; i < kMaxG; i++) {
      w[i] = 0.0f;
      if (i >= G) continue;
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
    for (int i = 0; i < kMaxG; i++) {
      if (i < G) l[i] += w[i];
    }
    const int64_t tile_keys = keys.count - tile < kTile ? keys.count - tile : kTile;
    for (int64_t idx = threadIdx.x; idx < G * HD; idx += kTile) {
      const int64_t i = idx / HD, d = idx % HD;
      float a = acc_s[idx] * factor_s[i];
      for (int64_t jj = 0; jj < tile_keys; jj++) {
        a = fmaf(p_s[i * kTile + jj], v[(ops::visible_key_row(keys, tile + jj) * dm.NKV + g) * HD + d], a);
      }
      acc_s[idx] = a;
    }
    __syncthreads();  // p_s and factor_s are rewritten by the next tile
  }
  for (int64_t idx = threadIdx.x; idx < G * HD; idx += kTile) {
    const int64_t i = idx / HD, d = idx % HD;
    float total = 0.0f;
#pragma unroll
    for (int ii = 0; ii < kMaxG; ii++) total = ii == i ? l[ii] : total;
    out[(t * dm.NH + g * G + i) * HD + d] = acc_s[idx] / total;
  }
#pragma unroll
  for (int i = 0; i < kMaxG; i++) {
    if (i < G && threadIdx.x == 0) lse[t * dm.NH + g * G + i] = m[i] + logf(l[i]);
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

// Block (t, g): dq of row t's G query heads. Dynamic shared memory: q_s, do_s, dq_s [G × HD] and
// ds_s [G × kTile].
__global__ void __launch_bounds__(kTile) dq_kernel(float* dq, const float* dout, const float* lse, const float* delta,
                                                   const float* q, const float* k, const float* v, Dims dm) {
  extern __shared__ float smem[];
  const int64_t t = blockIdx.x, g = blockIdx.y, HD = dm.HD;
  const int G = dm.G;
  float* q_s = smem;
  float* do_s = q_s + G * HD;
  float* dq_s = do_s + G * HD;
  float* ds_s = dq_s + G * HD;
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) {
    q_s[i] = q[(t * dm.NH + g * G) * HD + i];
    do_s[i] = dout[(t * dm.NH + g * G) * HD + i];
    dq_s[i] = 0.0f;
  }
  __syncthreads();
  const ops::VisibleKeys keys = keys_of(dm, t);
  for (int64_t tile = 0; tile < keys.count; tile += kTile) {
    const int64_t j = tile + threadIdx.x;
    if (j < keys.count) {
      const int64_t row = ops::visible_key_row(keys, j);
      const float* kr = k + (row * dm.NKV + g) * HD;
      const float* vr = v + (row * dm.NKV + g) * HD;
      for (int i = 0; i < G; i++) {
        const int64_t h = g * G + i;
        const float p = expf(dot(q_s + i * HD, kr, HD) * dm.scale - lse[t * dm.NH + h]);
        const float dp = dot(do_s + i * HD, vr, HD);
        ds_s[i * kTile + threadIdx.x] = p * (dp - delta[t * dm.NH + h]) * dm.scale;
      }
    }
    __syncthreads();
    const int64_t tile_keys = keys.count - tile < kTile ? keys.count - tile : kTile;
    for (int64_t idx = threadIdx.x; idx < G * HD; idx += kTile) {
      const int64_t i = idx / HD, d = idx % HD;
      float a = dq_s[idx];
      for (int64_t jj = 0; jj < tile_keys; jj++) {
        a = fmaf(ds_s[i * kTile + jj], k[(ops::visible_key_row(keys, tile + jj) * dm.NKV + g) * HD + d], a);
      }
      dq_s[idx] = a;
    }
    __syncthreads();
  }
  for (int64_t i = threadIdx.x; i < G * HD; i += kTile) dq[(t * dm.NH + g * G) * HD + i] = dq_s[i];
}

// The queries of rows [begin, end), a tile at a time, added into dk_s and dv_s (key row r of KV head
// g held in k_s, v_s). p_s, ds_s: [G × kTile].
__device__ void dkdv_segment(float* dk_s, float* dv_s, float* p_s, float* ds_s, const float* k_s, const float* v_s,
                             int64_t begin, int64_t end, const float* dout, const float* lse, const float* delta,
                             const float* q, int64_t g, const Dims& dm) {
  const int64_t HD = dm.HD;
  const int G = dm.G;
  for (int64_t tile = begin; tile < end; tile += kTile) {
    const int64_t t = tile + threadIdx.x;
    if (t < end) {
      for (int i = 0; i < G; i++) {
        const int64_t h = g * G + i;
        const float p = expf(dot(q + (t * dm.NH + h) * HD, k_s, HD) * dm.scale - lse[t * dm.NH + h]);
        const float dp = dot(dout + (t * dm.NH + h) * HD, v_s, HD);
        p_s[i * kTile + threadIdx.x] = p;
        ds_s[i * kTile + threadIdx.x] = p * (dp - delta[t * dm.NH + h]) * dm.scale;
      }
    }
    __syncthreads();
    const int64_t tile_queries = end - tile < kTile ? end - tile : kTile;
    for (int64_t d = threadIdx.x; d < HD; d += kTile) {
      float ak = dk_s[d], av = dv_s[d];
      for (int64_t jj = 0; jj < tile_queries; jj++) {
        for (int i = 0; i < G; i++) {
          const int64_t at = ((tile + jj) * dm.NH + g * G + i) * HD + d;
          ak = fmaf(ds_s[i * kTile + jj], q[at], ak);
          av = fmaf(p_s[i * kTile + jj], dout[at], av);
        }
      }
      dk_s[d] = ak;
      dv_s[d] = av;
    }
    __syncthreads();
  }
}

// Block (r, g): dk and dv of key row r of KV head g, over every query that sees it. Dynamic shared
// memory: k_s, v_s, dk_s, dv_s [HD], p_s, ds_s [G × kTile].
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
  float* ds_s = p_s + dm.G * kTile;
  for (int64_t d = threadIdx.x; d < HD; d += kTile) {
    k_s[d] = k[(r * dm.NKV + g) * HD + d];
    v_s[d] = v[(r * dm.NKV + g) * HD + d];
    dk_s[d] = 0.0f;
    dv_s[d] = 0.0f;
  }
  __syncthreads();
  const int64_t s = ops::packed_sequence_of(dm.seq_begins, dm.n_seq, r);
  // r's own sequence sees it from row r on; then each child of s sees all of s.
  dkdv_segment(dk_s, dv_s, p_s, ds_s, k_s, v_s, r, dm.seq_begins[s + 1], dout, lse, delta, q, g, dm);
  if (dm.seq_parent != nullptr) {
    for (int64_t c = s + 1; c < dm.n_seq; c++) {
      if (dm.seq_parent[c] == s) {
        dkdv_segment(dk_s, dv_s, p_s, ds_s, k_s, v_s, dm.seq_begins[c], dm.seq_begins[c + 1], dout, lse, delta, q, g, dm);
      }
    }
  }
  for (int64_t d = threadIdx.x; d < HD; d += kTile) {
    dk[(r * dm.NKV + g) * HD + d] = dk_s[d];
    dv[(r * dm.NKV + g) * HD + d] = dv_s[d];
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

void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const DevicePackedAttention& shape, cudaStream_t stream) {
  check_shape(shape, "causal_attention_train_forward");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const size_t shared = sizeof(float) * size_t(2 * dm.G * dm.HD + dm.G * kTile);
  forward_kernel<<<dim3(unsigned(shape.T), unsigned(shape.NKV)), kTile, shared, stream>>>(out, lse, q, k, v, dm);
  check_launch("causal_attention_train_forward", {{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}});
}

void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const DevicePackedAttention& shape,
                               void* scratch, cudaStream_t stream) {
  check_shape(shape, "causal_attention_backward");
  if (shape.T == 0) return;
  const Dims dm = dims_of(shape);
  const Shapes shapes{{"T", shape.T}, {"NH", shape.NH}, {"NKV", shape.NKV}, {"HD", shape.HD}};
  float* delta = static_cast<float*>(scratch);
  const int64_t rows = shape.T * shape.NH;
  delta_kernel<<<blocks_for(rows, kWarps), kTile, 0, stream>>>(delta, dout, out, rows, shape.HD);
  check_launch("causal_attention_backward (delta)", shapes);
  const dim3 grid(unsigned(shape.T), unsigned(shape.NKV));
  const size_t dq_shared = sizeof(float) * size_t(3 * dm.G * dm.HD + dm.G * kTile);
  dq_kernel<<<grid, kTile, dq_shared, stream>>>(dq, dout, lse, delta, q, k, v, dm);
  check_launch("causal_attention_backward (dq)", shapes);
  const size_t dkdv_shared = sizeof(float) * size_t(4 * dm.HD + 2 * dm.G * kTile);
  dkdv_kernel<<<grid, kTile, dkdv_shared, stream>>>(dk, dv, dout, lse, delta, q, k, v, dm);
  check_launch("causal_attention_backward (dk, dv)", shapes);
}

}  // namespace s3::cuda
