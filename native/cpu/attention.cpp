// The attention driver (tiling, page walking, threads, the f32/bf16/fp8 page dispatch), the scalar
// chunk kernel, fp8 row quantization and the per-level dispatch; see attention.h.
#include "cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "core/ops/fp8_rows.h"
#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

// Element d of row j as f32; `scales` (fp8 only) holds the chunk's row scales.
inline float widen(const float* row, int64_t d, const float*, int64_t) { return row[d]; }
inline float widen(const uint16_t* row, int64_t d, const float*, int64_t) { return bf16_to_f32(row[d]); }
inline float widen(const uint8_t* row, int64_t d, const float* scales, int64_t j) {
  return fp8e4m3_to_f32(row[d]) * scales[j];
}

template <typename KV>
void attend_chunk_scalar(const float* q, int64_t R, const KV* k, const KV* v, const float* k_scale,
                         const float* v_scale, int64_t J, int64_t HD, const int32_t* visible, float scale,
                         float* row_max, float* row_sum, float* out) {
  float score[kAttentionKeyChunk];
  for (int64_t r = 0; r < R; r++) {
    const int64_t seen = visible[r];
    if (seen == 0) continue;
    const float* qr = q + r * HD;
    float chunk_max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < seen; j++) {
      float dot = 0.0f;
      for (int64_t d = 0; d < HD; d++) dot += qr[d] * widen(k + j * HD, d, k_scale, j);
      score[j] = dot * scale;
      chunk_max = std::max(chunk_max, score[j]);
    }
    const float new_max = std::max(row_max[r], chunk_max);
    const float correction = new_max == row_max[r] ? 1.0f : std::exp(row_max[r] - new_max);  // e^0 = 1 exactly
    float* o = out + r * HD;
    for (int64_t d = 0; d < HD; d++) o[d] *= correction;
    float sum = 0.0f;
    for (int64_t j = 0; j < seen; j++) {
      const float p = std::exp(score[j] - new_max);
      sum += p;
      for (int64_t d = 0; d < HD; d++) o[d] += p * widen(v + j * HD, d, v_scale, j);
    }
    row_sum[r] = row_sum[r] * correction + sum;
    row_max[r] = new_max;
  }
}

const AttentionKernels kAttentionScalar = {"scalar", attend_chunk_scalar<float>, attend_chunk_scalar<uint16_t>,
                                           attend_chunk_scalar<uint8_t>};

// Asks for every 64-byte cache line that [start, start + bytes) touches, ahead of use, into the
// L2 cache (prefetcht1), not L1: a chunk is up to 128 lines, and prefetches into L1 each hold one of
// the core's few L1 miss buffers, so a burst of them stalls the core until the lines arrive. Decode
// steps over a 64-sequence cache read 1.7–2.5× faster per core this way (docs/benchmarks.md).
inline void prefetch(const void* start, int64_t bytes) {
  const uintptr_t end = reinterpret_cast<uintptr_t>(start) + uintptr_t(bytes);
  for (uintptr_t line = reinterpret_cast<uintptr_t>(start) & ~uintptr_t(63); line < end; line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
  }
}

// Query rows per tile: the G heads sharing a KV head times as many tokens as fit, so each
// loaded key chunk serves many rows.
constexpr int64_t kTileRows = 32;

struct TileScratch {
  std::vector<float> q, out, row_max, row_sum;
  std::vector<uint32_t> q_pairs;  // the rows of q as bf16 pairs, for BF16 products
  std::vector<int32_t> visible;
};

// Tokens [first, first + count) of `seq` (indices within the sequence) against KV head g; the
// pages hold KV elements (float, bf16 bits or fp8 bytes with row scales), read by `attend_chunk`,
// or for a bf16 cache by `products` where it is given (BF16 products; the tile's query rows
// rounded and laid out once, by its prepare_bf16_product_queries).
template <typename KV>
void attend_tile(float* out, const float* q, const KvPages& kv, const AttentionSequence& seq, int64_t token_offset,
                 int64_t first, int64_t count, int64_t g, int64_t NH, int64_t NKV, int64_t HD,
                 AttendChunk<KV> attend_chunk, const AttentionKernels* products, TileScratch& scratch) {
  const KV* keys = static_cast<const KV*>(kv.keys);
  const KV* values = static_cast<const KV*>(kv.values);
  const int64_t G = NH / NKV;
  const int64_t R = count * G;
  scratch.out.resize(size_t(R * HD));
  std::memset(scratch.out.data(), 0, scratch.out.size() * sizeof(float));  // +0.0f
  scratch.row_max.assign(size_t(R), -std::numeric_limits<float>::infinity());
  scratch.row_sum.assign(size_t(R), 0.0f);
  scratch.visible.resize(size_t(R));
  // Row r = (token i, head g·G + j) with r = i·G + j; a token's G heads are adjacent in q.
  const float* tile_q = q + ((token_offset + first) * NH + g * G) * HD;
  if (products != nullptr) {
    // BF16 products read the rows in place, rounding and laying them out once.
    const int64_t groups = (R + kBf16ProductsGroupRows - 1) / kBf16ProductsGroupRows;
    scratch.q_pairs.resize(size_t(groups * (HD / 2) * kBf16ProductsGroupRows));
    products->prepare_bf16_product_queries(tile_q, R, G, NH * HD, HD, scratch.q_pairs.data());
  } else {
    scratch.q.resize(size_t(R * HD));
    for (int64_t i = 0; i < count; i++) {
      std::copy(tile_q + i * NH * HD, tile_q + i * NH * HD + G * HD, scratch.q.begin() + i * G * HD);
    }
  }
  const float scale = 1.0f / std::sqrt(float(HD));
  const int64_t last_position = seq.start + first + count - 1;
  for (int64_t chunk = 0; chunk <= last_position; chunk += kAttentionKeyChunk) {
    const int64_t J = std::min(kAttentionKeyChunk, last_position + 1 - chunk);
    for (int64_t i = 0; i < count; i++) {
      const int64_t seen = seq.start + first + i + 1 - chunk;  // keys of the chunk token i sees
      const int32_t visible = int32_t(seen < 0 ? 0 : seen > J ? J : seen);
      for (int64_t j = 0; j < G; j++) scratch.visible[size_t(i * G + j)] = visible;
    }
    const int64_t block = seq.block_table[chunk / kv.block_size];
    const int64_t row = ((block * NKV + g) * kv.block_size + chunk % kv.block_size) * HD;
    // The next chunk's keys and values usually sit in another page, which the hardware prefetcher
    // does not foresee; ask for them while this chunk computes (decode steps are bound by this).
    const int64_t next = chunk + kAttentionKeyChunk;
    if (next <= last_position) {
      const int64_t next_block = seq.block_table[next / kv.block_size];
      const int64_t next_row = ((next_block * NKV + g) * kv.block_size + next % kv.block_size) * HD;
      const int64_t rows = std::min(kAttentionKeyChunk, last_position + 1 - next);
      prefetch(keys + next_row, rows * HD * int64_t(sizeof(KV)));
      prefetch(values + next_row, rows * HD * int64_t(sizeof(KV)));
      if (kv.key_scales != nullptr) {
        prefetch(kv.key_scales + next_row / HD, rows * int64_t(sizeof(float)));
        prefetch(kv.value_scales + next_row / HD, rows * int64_t(sizeof(float)));
      }
    }
    const float* key_scales = kv.key_scales != nullptr ? kv.key_scales + row / HD : nullptr;
    const float* value_scales = kv.value_scales != nullptr ? kv.value_scales + row / HD : nullptr;
    if constexpr (sizeof(KV) == sizeof(uint16_t)) {
      if (products != nullptr) {
        products->attend_chunk_bf16_products(scratch.q_pairs.data(), R, keys + row, values + row, J, HD,
                                             scratch.visible.data(), scale, scratch.row_max.data(),
                                             scratch.row_sum.data(), scratch.out.data());
        continue;
      }
    }
    attend_chunk(scratch.q.data(), R, keys + row, values + row, key_scales, value_scales, J, HD,
                 scratch.visible.data(), scale, scratch.row_max.data(), scratch.row_sum.data(), scratch.out.data());
  }
  for (int64_t r = 0; r < R; r++) {
    float* dst = out + ((token_offset + first + r / G) * NH + g * G + r % G) * HD;
    for (int64_t d = 0; d < HD; d++) dst[d] = scratch.out[size_t(r * HD + d)] / scratch.row_sum[size_t(r)];
  }
}

}  // namespace

float quantize_fp8_row(const float* x, int64_t count, uint8_t* bytes) {
  float largest = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < count; i++) {
    finite = finite && std::isfinite(x[i]);
    largest = std::max(largest, std::fabs(x[i]));
  }
  const float scale = ops::fp8_row_scale(largest, finite);
  for (int64_t i = 0; i < count; i++) bytes[i] = ops::fp8_row_encode(x[i], scale, finite);
  return scale;
}

void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool, const AttentionKernels& kernels) {
  const int64_t G = NH / NKV;
  const int64_t tile_tokens = std::max<int64_t>(1, kTileRows / G);
  // Work items (sequence, KV head, tile) in that order; first_item[b] is sequence b's first.
  // Reused across calls; named through references because the workers must read the calling
  // thread's copies, not their own thread_local ones.
  thread_local std::vector<int64_t> first_item_storage, token_offset_storage;
  std::vector<int64_t>& first_item = first_item_storage;
  std::vector<int64_t>& token_offset = token_offset_storage;
  first_item.assign(size_t(B + 1), 0);
  token_offset.assign(size_t(B + 1), 0);
  for (int64_t b = 0; b < B; b++) {
    const int64_t tiles = (sequences[b].length + tile_tokens - 1) / tile_tokens;
    first_item[size_t(b + 1)] = first_item[size_t(b)] + tiles * NKV;
    token_offset[size_t(b + 1)] = token_offset[size_t(b)] + sequences[b].length;
  }
  const int64_t items = first_item[size_t(B)];
  // BF16 products where the level has them and the head fits them (even, at most 256 dims).
  const AttentionKernels* bf16_products =
      kernels.attend_chunk_bf16_products != nullptr && HD % 2 == 0 && HD <= kBf16ProductsMaxHeadDim ? &kernels : nullptr;
  const int64_t threads = int64_t(pool.num_threads());
  // Items differ in cost (later tiles see more keys), so threads take them round-robin rather
  // than in contiguous runs; each item's result does not depend on who computes it.
  pool.parallel_for(size_t(threads), [&](size_t begin, size_t end, size_t) {
    thread_local TileScratch scratch;
    for (int64_t lane = int64_t(begin); lane < int64_t(end); lane++) {
      for (int64_t item = lane; item < items; item += threads) {
        const int64_t b = std::upper_bound(first_item.begin(), first_item.end(), item) - first_item.begin() - 1;
        const int64_t local = item - first_item[size_t(b)];
        const int64_t tiles = (first_item[size_t(b + 1)] - first_item[size_t(b)]) / NKV;
        const int64_t g = local / tiles, first = (local % tiles) * tile_tokens;
        const int64_t count = std::min(tile_tokens, sequences[b].length - first);
        switch (kv.dtype) {
          case KvDtype::F32:
            attend_tile(out, q, kv, sequences[b], token_offset[size_t(b)], first, count, g, NH, NKV, HD,
                        kernels.attend_chunk, nullptr, scratch);
            break;
          case KvDtype::Bf16:
            attend_tile(out, q, kv, sequences[b], token_offset[size_t(b)], first, count, g, NH, NKV, HD,
                        kernels.attend_chunk_bf16, bf16_products, scratch);
            break;
          case KvDtype::Fp8E4M3:
            attend_tile(out, q, kv, sequences[b], token_offset[size_t(b)], first, count, g, NH, NKV, HD,
                        kernels.attend_chunk_fp8, nullptr, scratch);
            break;
        }
      }
    }
  });
}

void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool) {
  attention_forward(out, q, kv, sequences, B, NH, NKV, HD, pool, attention_kernels());
}

const AttentionKernels* attention_kernels_for(SimdLevel level) {
  static const AttentionKernels avx512bf16 = [] {
    AttentionKernels kernels = kAttentionAvx512;
    kernels.name = "avx512bf16";
    kernels.attend_chunk_bf16_products = attend_chunk_bf16_products_avx512bf16;
    kernels.prepare_bf16_product_queries = prepare_bf16_product_queries_avx512bf16;
    return kernels;
  }();
  return select_kernels<AttentionKernels>({&kAttentionScalar, &kAttentionAvx2, &kAttentionAvx512, &avx512bf16}, level);
}

const AttentionKernels& attention_kernels() {
  static const AttentionKernels& chosen = *attention_kernels_for(cpu_info().level);
  return chosen;
}

AttentionKernels attention_kernels_with_f32_products() {
  AttentionKernels kernels = attention_kernels();
  kernels.attend_chunk_bf16_products = nullptr;
  kernels.prepare_bf16_product_queries = nullptr;
  return kernels;
}

}  // namespace s3::cpu
