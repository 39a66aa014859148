// Split-KV paged attention, its merge, the double-precision reference and the choice between the
// implementations; see attention.h.
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/dtype.h"
#include "core/ops/kv_layout.h"
#include "core/ops/online_softmax.h"
#include "cuda/attention.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kThreads = 128;  // keys per tile; 4 warps
constexpr int kMaxGroup = 8;   // query heads per KV head the fast kernel serves

// A cached element widened to f32: bf16 exactly, fp8 times its row's scale rounded once (what an
// f32 cache holding the dequantized value would hold, as the CPU kernels read it).
__device__ inline float widen(const float* pool, int64_t i, float) { return pool[i]; }
__device__ inline float widen(const uint16_t* pool, int64_t i, float) { return bf16_to_f32(pool[i]); }
__device__ inline float widen(const uint8_t* pool, int64_t i, float scale) { return __fmul_rn(fp8e4m3_to_f32(pool[i]), scale); }

// Row of KV head `head` holding `key` of a sequence with block table `table`, in a layer's pools.
__device__ inline int64_t key_row(const DeviceKvPages& kv, const int32_t* table, int64_t key, int64_t head) {
  return ops::kv_row(0, ops::kv_block_of(table, key, kv.block_size), head, key % kv.block_size, kv.num_blocks, kv.kv_heads,
                     kv.block_size);
}

__device__ inline float row_scale(const float* scales, int64_t row) { return scales != nullptr ? scales[row] : 1.0f; }

// 16 bytes of a cached row (16-byte aligned: rows are HD ≥ 16 elements) widened as `widen` does.
template <typename KV>
struct Chunk16 {
  static constexpr int kCount = 16 / int(sizeof(KV));
};
__device__ inline void unpack16(const float* src, float scale, float (&out)[4]) {
  const float4 v = *reinterpret_cast<const float4*>(src);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
}
__device__ inline void unpack16(const uint16_t* src, float scale, float (&out)[8]) {
  const uint4 v = *reinterpret_cast<const uint4*>(src);
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    out[2 * i] = f32_from_bits(words[i] << 16);
    out[2 * i + 1] = f32_from_bits(words[i] & 0xFFFF0000u);
  }
}
__device__ inline void unpack16(const uint8_t* src, float scale, float (&out)[16]) {
  const uint4 v = *reinterpret_cast<const uint4*>(src);
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 16; i++) out[i] = __fmul_rn(fp8e4m3_to_f32(uint8_t(words[i / 4] >> (8 * (i % 4)))), scale);
}

// Partial state of (token, query head, split): m, l, then HD accumulated values.
__device__ inline float* partial_at(float* scratch, int64_t t, int64_t hq, int64_t split, int64_t NH, int64_t HD) {
  return scratch + attention_partial_offset(t, hq, split, NH, HD);
}

template <typename KV, int HD>
__global__ void __launch_bounds__(kThreads) split_kernel(float* scratch, const float* q, DeviceKvPages kv,
                                                         AttentionTokens tokens, int NH, float scale) {
  constexpr int kLanesPerKey = HD >= kThreads ? kThreads : HD;  // threads sharing one key's dims in PV
  constexpr int kSubsets = kThreads / kLanesPerKey;              // keys processed side by side in PV
  constexpr int kDims = HD / kLanesPerKey;                       // dims per thread in PV
  const int64_t t = blockIdx.x, head = blockIdx.y, split = blockIdx.z;
  const int G = NH / int(kv.kv_heads);
  const int64_t p = tokens.position[t];
  const int64_t length = attention_split_positions(p);
  const int64_t begin = split * length;
  if (begin > p) return;
  const int64_t end = min(begin + length, p + 1);
  const int32_t* table = tokens.tables + tokens.table_offset[t];
  const KV* keys = static_cast<const KV*>(kv.keys);
  const KV* values = static_cast<const KV*>(kv.values);

  __shared__ float q_s[kMaxGroup][HD];
  // The tile's weights [g][key]; afterwards the PV partial sums [subset][g][HD].
  __shared__ float p_s[kMaxGroup * (HD > kThreads ? HD : kThreads)];
  __shared__ float reduce_s[(kThreads / 32) * kMaxGroup];
  for (int i = threadIdx.x; i < G * HD; i += kThreads) q_s[i / HD][i % HD] = q[(t * NH + head * G + i / HD) * HD + i % HD];
  __syncthreads();

  const int sub = threadIdx.x / kLanesPerKey, lane_dim = threadIdx.x % kLanesPerKey;
  float m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][kDims];
#pragma unroll
  for (int g = 0; g < kMaxGroup; g++) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int k = 0; k < kDims; k++) acc[g][k] = 0.0f;
  }

  for (int64_t tile = begin; tile < end; tile += kThreads) {
    const int64_t key = tile + threadIdx.x;
    float s[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) s[g] = 0.0f;
    if (key < end) {
      const int64_t row = key_row(kv, table, key, head);
      const float key_scale = row_scale(kv.key_scales, row);
      constexpr int kPer = Chunk16<KV>::kCount;
      for (int c = 0; c < HD / kPer; c++) {
        float k[kPer];
        unpack16(keys + row * HD + c * kPer, key_scale, k);
#pragma unroll
        for (int e = 0; e < kPer; e++) {
#pragma unroll
          for (int g = 0; g < kMaxGroup; g++) {
            if (g < G) s[g] += q_s[g][c * kPer + e] * k[e];
          }
        }
      }
#pragma unroll
      for (int g = 0; g < kMaxGroup; g++) s[g] *= scale;
    } else {
#pragma unroll
      for (int g = 0; g < kMaxGroup; g++) s[g] = -INFINITY;
    }
    float tile_max[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) tile_max[g] = s[g];
    block_reduce_each<true>(tile_max, G, reduce_s);
    float w[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) {
      if (g >= G) continue;
      const float m_new = fmaxf(m[g], tile_max[g]);  // finite: the tile's first key is visible
      const float factor = m[g] == -INFINITY ? 0.0f : expf(m[g] - m_new);
      w[g] = key < end ? expf(s[g] - m_new) : 0.0f;
      p_s[g * kThreads + threadIdx.x] = w[g];
      l[g] *= factor;
#pragma unroll
      for (int k = 0; k < kDims; k++) acc[g][k] *= factor;
      m[g] = m_new;
    }
    block_reduce_each<false>(w, G, reduce_s);  // also orders the p_s writes before the reads below
#pragma unroll
    for (int g = 0; g < kMaxGroup; g++) {
      if (g < G) l[g] += w[g];
    }
    const int tile_keys = int(min(int64_t(kThreads), end - tile));
    for (int j = sub; j < tile_keys; j += kSubsets) {
      const int64_t row = key_row(kv, table, tile + j, head);
      const float value_scale = row_scale(kv.value_scales, row);
#pragma unroll
      for (int k = 0; k < kDims; k++) {
        const float v = widen(values, row * HD + lane_dim + k * kLanesPerKey, value_scale);
#pragma unroll
        for (int g = 0; g < kMaxGroup; g++) {
          if (g < G) acc[g][k] += p_s[g * kThreads + j] * v;
        }
      }
    }
    __syncthreads();  // p_s is rewritten by the next tile
  }

  // The kSubsets partial sums of each dimension, added in subset order by subset 0's threads.
#pragma unroll
  for (int g = 0; g < kMaxGroup; g++) {
    if (g >= G) continue;
#pragma unroll
    for (int k = 0; k < kDims; k++) p_s[(sub * G + g) * HD + lane_dim + k * kLanesPerKey] = acc[g][k];
  }
  __syncthreads();
  if (sub == 0) {
    for (int g = 0; g < G; g++) {
      float* out = partial_at(scratch, t, head * G + g, split, NH, HD);
#pragma unroll
      for (int k = 0; k < kDims; k++) {
        const int d = lane_dim + k * kLanesPerKey;
        float total = p_s[g * HD + d];
        for (int other = 1; other < kSubsets; other++) total += p_s[(other * G + g) * HD + d];
        out[2 + d] = total;
      }
      if (threadIdx.x == 0) {
        out[0] = m[g];
        out[1] = l[g];
      }
    }
  }
}

// out[t, hq] from the splits of (t, hq), merged in split order (core/ops/online_softmax.h).
__global__ void merge_kernel(float* out, const float* scratch, AttentionTokens tokens, int NH, int HD) {
  const int64_t t = blockIdx.x, hq = blockIdx.y;
  const int64_t p = tokens.position[t];
  const int64_t length = attention_split_positions(p);
  const int64_t splits = (p + length) / length;
  for (int d = threadIdx.x; d < HD; d += blockDim.x) {
    float m = -INFINITY, l = 0.0f, o = 0.0f;
    for (int64_t s = 0; s < splits; s++) {
      const float* part = partial_at(const_cast<float*>(scratch), t, hq, s, NH, HD);
      const ops::SoftmaxMergeFactors f = ops::softmax_merge_factors(m, part[0]);
      l = l * f.f_a + part[1] * f.f_b;
      o = o * f.f_a + part[2 + d] * f.f_b;
      m = f.m;
    }
    out[(t * NH + hq) * HD + d] = o / l;
  }
}

template <typename KV>
__device__ inline double reference_score(const float* q, const KV* keys, const float* key_scales, int64_t row, int64_t HD,
                                         float scale) {
  const float key_scale = row_scale(key_scales, row);
  double s = 0.0;
  for (int64_t d = 0; d < HD; d++) s += double(q[d]) * double(widen(keys, row * HD + d, key_scale));
  return s * double(scale);
}

// One block per (token, query head): the max score over every visible key, then the weights and
// the weighted values tile by tile, all in double.
template <typename KV>
__global__ void reference_kernel(float* out, const float* q, DeviceKvPages kv, AttentionTokens tokens, int NH, int HD,
                                 float scale) {
  const int64_t t = blockIdx.x, hq = blockIdx.y;
  const int64_t head = hq / (NH / kv.kv_heads);
  const int64_t p = tokens.position[t];
  const int32_t* table = tokens.tables + tokens.table_offset[t];
  const float* qrow = q + (t * NH + hq) * HD;
  const KV* keys = static_cast<const KV*>(kv.keys);
  const KV* values = static_cast<const KV*>(kv.values);
  __shared__ double w_s[kThreads];
  __shared__ double reduce_s[32];
  double m = -INFINITY;
  for (int64_t key = threadIdx.x; key <= p; key += kThreads) {
    m = fmax(m, reference_score(qrow, keys, kv.key_scales, key_row(kv, table, key, head), HD, scale));
  }
  m = block_max<double>(m, reduce_s, -INFINITY);
  double l = 0.0, acc[2] = {0.0, 0.0};  // dims threadIdx.x and threadIdx.x + 128 (HD ≤ 256)
  for (int64_t tile = 0; tile <= p; tile += kThreads) {
    const int64_t key = tile + threadIdx.x;
    const double w = key <= p ? exp(reference_score(qrow, keys, kv.key_scales, key_row(kv, table, key, head), HD, scale) - m) : 0.0;
    w_s[threadIdx.x] = w;
    l += w;
    __syncthreads();
    const int64_t tile_keys = min(int64_t(kThreads), p + 1 - tile);
    for (int64_t j = 0; j < tile_keys; j++) {
      const int64_t row = key_row(kv, table, tile + j, head);
      const float value_scale = row_scale(kv.value_scales, row);
      for (int k = 0; k < 2; k++) {
        const int64_t d = threadIdx.x + k * kThreads;
        if (d < HD) acc[k] += w_s[j] * double(widen(values, row * HD + d, value_scale));
      }
    }
    __syncthreads();
  }
  l = block_sum(l, reduce_s);
  for (int k = 0; k < 2; k++) {
    const int64_t d = threadIdx.x + k * kThreads;
    if (d < HD) out[(t * NH + hq) * HD + d] = float(acc[k] / l);
  }
}

template <typename KV>
void launch_split(float* scratch, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, int NH, float scale,
                  cudaStream_t stream) {
  // Splits a token does not need return at once (a smaller position may need more splits than a
  // larger one: the split length doubles in steps).
  const dim3 grid(unsigned(tokens.T), unsigned(kv.kv_heads), unsigned(kMaxAttentionSplits));
  switch (kv.head_dim) {
    case 16: split_kernel<KV, 16><<<grid, kThreads, 0, stream>>>(scratch, q, kv, tokens, NH, scale); break;
    case 32: split_kernel<KV, 32><<<grid, kThreads, 0, stream>>>(scratch, q, kv, tokens, NH, scale); break;
    case 64: split_kernel<KV, 64><<<grid, kThreads, 0, stream>>>(scratch, q, kv, tokens, NH, scale); break;
    case 128: split_kernel<KV, 128><<<grid, kThreads, 0, stream>>>(scratch, q, kv, tokens, NH, scale); break;
    case 256: split_kernel<KV, 256><<<grid, kThreads, 0, stream>>>(scratch, q, kv, tokens, NH, scale); break;
    default: throw CudaError("attention_forward: head_dim " + std::to_string(kv.head_dim) + " is not served");
  }
}

float score_scale(int64_t HD) { return 1.0f / std::sqrt(float(HD)); }

}  // namespace

bool attention_forward_supports(int64_t NH, int64_t NKV, int64_t HD) {
  const bool power_of_two = HD >= 16 && HD <= 256 && (HD & (HD - 1)) == 0;
  return power_of_two && NKV > 0 && NH % NKV == 0 && NH / NKV <= kMaxGroup;
}

int64_t attention_scratch_floats(int64_t T, int64_t NH, int64_t HD) { return T * NH * kMaxAttentionSplits * (HD + 2); }

void attention_forward(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, int64_t NH,
                       float* scratch, cudaStream_t stream) {
  if (tokens.T == 0) return;
  if (!attention_forward_supports(NH, kv.kv_heads, kv.head_dim)) {
    throw CudaError("attention_forward: " + std::to_string(NH) + " heads over " + std::to_string(kv.kv_heads) +
                    " KV heads of head_dim " + std::to_string(kv.head_dim) + " is not served; use attention_reference");
  }
  const float scale = score_scale(kv.head_dim);
  switch (kv.dtype) {
    case KvDtype::F32: launch_split<float>(scratch, q, kv, tokens, int(NH), scale, stream); break;
    case KvDtype::Bf16: launch_split<uint16_t>(scratch, q, kv, tokens, int(NH), scale, stream); break;
    case KvDtype::Fp8E4M3: launch_split<uint8_t>(scratch, q, kv, tokens, int(NH), scale, stream); break;
  }
  check_launch("attention_forward (splits)", {{"T", tokens.T}, {"NH", NH}, {"NKV", kv.kv_heads}, {"HD", kv.head_dim}});
  attention_merge_splits(out, scratch, tokens, NH, kv.head_dim, stream);
}

void attention_merge_splits(float* out, const float* scratch, const AttentionTokens& tokens, int64_t NH, int64_t HD,
                            cudaStream_t stream) {
  if (tokens.T == 0) return;
  merge_kernel<<<dim3(unsigned(tokens.T), unsigned(NH)), kThreads, 0, stream>>>(out, scratch, tokens, int(NH), int(HD));
  check_launch("attention_forward (merge)", {{"T", tokens.T}, {"NH", NH}, {"HD", HD}});
}

const char* attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::Split: return "split";
    case AttentionKernel::Tiled: return "tiled";
    case AttentionKernel::TiledMma: return "tiled-mma";
    case AttentionKernel::Reference: return "reference";
  }
  return "split";
}

AttentionKernel attention_kernel_from_environment() {
  static const AttentionKernel kernel = [] {
    const char* value = std::getenv("S3_CUDA_ATTENTION");
    const std::string text = value != nullptr ? value : "";
    if (text.empty() || text == "split") return AttentionKernel::Split;
    if (text == "tiled") return AttentionKernel::Tiled;
    if (text == "tiled-mma") return AttentionKernel::TiledMma;
    throw std::invalid_argument("S3_CUDA_ATTENTION is \"" + text + "\"; expected \"split\" (the default), \"tiled\" or \"tiled-mma\"");
  }();
  return kernel;
}

void attention_reference(float* out, const float* q, const DeviceKvPages& kv, const AttentionTokens& tokens, int64_t NH,
                         cudaStream_t stream) {
  if (tokens.T == 0) return;
  if (kv.head_dim > 2 * kThreads) throw CudaError("attention_reference: head_dim above 256 is not served");
  const dim3 grid(unsigned(tokens.T), unsigned(NH));
  const float scale = score_scale(kv.head_dim);
  switch (kv.dtype) {
    case KvDtype::F32: reference_kernel<float><<<grid, kThreads, 0, stream>>>(out, q, kv, tokens, int(NH), int(kv.head_dim), scale); break;
    case KvDtype::Bf16: reference_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(out, q, kv, tokens, int(NH), int(kv.head_dim), scale); break;
    case KvDtype::Fp8E4M3: reference_kernel<uint8_t><<<grid, kThreads, 0, stream>>>(out, q, kv, tokens, int(NH), int(kv.head_dim), scale); break;
  }
  check_launch("attention_reference", {{"T", tokens.T}, {"NH", NH}, {"NKV", kv.kv_heads}, {"HD", kv.head_dim}});
}

}  // namespace s3::cuda
