// attention.h: causal grouped-query attention over a paged K/V cache, flash style: keys are
// visited in chunks of kAttentionKeyChunk positions with a running (online) softmax, so no
// T × T score matrix ever exists, whatever the sequence length.
//
// Determinism: a query row's result depends only on its own visible keys. Chunks are fixed
// ranges of absolute positions; keys a row may not see are excluded from its max and contribute
// exact zeros. So whether a token is computed in a prefill tile, alone in a decode step, or next
// to other sequences, its output has the same bits (for a given SIMD level).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/kv_dtype.h"
#include "core/thread_pool.h"

namespace s3::cpu {

// Keys per online-softmax step; cache blocks hold a multiple of it.
constexpr int64_t kAttentionKeyChunk = 16;

// Element type of cached keys and values (core/kv_dtype.h). The kernels widen bf16 and fp8 to f32
// as they read them (no f32 copy of the cache), or multiply bf16 as it is (BF16 products).
using s3::KvDtype;
using s3::kv_dtype_size;
using s3::kv_row_scale_bytes;

// fp8 quantization of one row of `count` values (RNE, saturating at ±448): returns the row's
// scale max|x| / 448 (1 for a row of zeros, or one too small for a nonzero f32 scale; NaN for a
// row holding inf or NaN, so it dequantizes to NaN as its f32 values would poison attention) and
// writes bytes[i] = f32_to_fp8e4m3(x[i] / scale). No NaN code (0x7F, 0xFF) is ever written.
float quantize_fp8_row(const float* x, int64_t count, uint8_t* bytes);

// One layer's K/V pages. Block b of a pool is [NKV × block_size × HD] elements of `dtype` (float,
// uint16_t bf16 bits or uint8_t fp8 bytes): each KV head's rows are contiguous, row i of block b
// holding the position block_table[...] maps to b plus i. An fp8 cache keeps the rows' scales in
// pools of their own with the same layout and HD = 1: the row at element offset o has scale o / HD.
struct KvPages {
  const void* keys = nullptr;    // [num_blocks × NKV × block_size × HD]
  const void* values = nullptr;  // [num_blocks × NKV × block_size × HD]
  int64_t block_size = 0;        // positions per block, a multiple of kAttentionKeyChunk
  KvDtype dtype = KvDtype::F32;
  const float* key_scales = nullptr;    // fp8 only: [num_blocks × NKV × block_size]
  const float* value_scales = nullptr;  // fp8 only: [num_blocks × NKV × block_size]
};

// One sequence of a batch.
struct AttentionSequence {
  int64_t start = 0;   // positions [0, start) were cached by earlier steps
  int64_t length = 0;  // new tokens this step, at positions start .. start + length - 1
  // Cache block of each run of block_size positions: positions [i·block_size, (i+1)·block_size)
  // live in block block_table[i]; it covers at least start + length positions.
  const int32_t* block_table = nullptr;
  int64_t num_table_blocks = 0;
};

// Folds J (≤ kAttentionKeyChunk) consecutive keys into R query rows' running softmax.
// q: [R × HD]; k, v: [J × HD] of KV (float, uint16_t bf16 bits or uint8_t fp8 bytes); k_scale,
// v_scale: the J rows' scales when KV is fp8 (ignored otherwise); visible[r] ≤ J: row r sees keys
// 0 .. visible[r] − 1 of the chunk; row_max[R], row_sum[R], out[R × HD]: running max of scaled
// scores, sum of exp(score − max), and Σ exp(score − max)·v (unnormalized), updated in place.
template <typename KV>
using AttendChunk = void (*)(const float* q, int64_t R, const KV* k, const KV* v, const float* k_scale,
                             const float* v_scale, int64_t J, int64_t HD, const int32_t* visible, float scale,
                             float* row_max, float* row_sum, float* out);

// The same fold over a bf16 cache with BF16 products and f32 accumulation: q holds the query rows
// rounded to bf16 (RNE) as PrepareBf16ProductQueries lays them out, keys and values are used as
// stored, and each row's weights exp(score − max) are rounded to bf16 before they multiply the values
// and before they are summed into row_sum. HD even and ≤ kBf16ProductsMaxHeadDim.
using AttendChunkBf16Products = void (*)(const uint32_t* q, int64_t R, const uint16_t* k, const uint16_t* v, int64_t J,
                                         int64_t HD, const int32_t* visible, float scale, float* row_max, float* row_sum,
                                         float* out);
constexpr int64_t kBf16ProductsMaxHeadDim = 256;
// Query rows f32 → bf16 pairs for AttendChunkBf16Products. Row r (of R) is the HD floats at
// q + (r / G) × token_stride + (r % G) × HD: a token's G query heads side by side, tokens
// token_stride floats apart, as attention_forward's tiles read them in place. Rows in groups of
// kBf16ProductsGroupRows, and in group g, for each dim pair p, the pairs (q[2p], q[2p + 1]) of its
// rows side by side: pairs[(g × HD/2 + p) × 16 + r − 16g] for row r of the group (rows past R
// zero), ceil(R / 16) × HD/2 × 16 entries in all.
using PrepareBf16ProductQueries = void (*)(const float* q, int64_t R, int64_t G, int64_t token_stride, int64_t HD,
                                           uint32_t* pairs);
constexpr int64_t kBf16ProductsGroupRows = 16;

// One implementation per SIMD level. The first three entries run the same code on the same f32
// values: a bf16 cache gives the very bits an f32 cache holding the bf16-rounded keys and values
// gives, and an fp8 cache those of an f32 cache holding the dequantized values
// fp8e4m3_to_f32(byte) × scale (each element is widened and multiplied by its row's scale, rounded
// once, before it is used). Levels that multiply BF16 natively (avx512bf16, amx) set
// attend_chunk_bf16_products: a bf16 cache then goes through it instead (the query rows rounded to
// bf16 and laid out once per tile by prepare_bf16_product_queries), which changes the last bits against the f32 cache of the same values, as the
// level's matmuls do; a row's result still depends only on its own keys (the invariants above).
struct AttentionKernels {
  const char* name;
  AttendChunk<float> attend_chunk;
  AttendChunk<uint16_t> attend_chunk_bf16;
  AttendChunk<uint8_t> attend_chunk_fp8;
  AttendChunkBf16Products attend_chunk_bf16_products = nullptr;
  PrepareBf16ProductQueries prepare_bf16_product_queries = nullptr;
};

// out, q: [T × NH × HD] for the T = Σ length new tokens, packed sequence after sequence. Each
// new token's keys and values must already be in the pages. Query head h reads KV head
// h / (NH / NKV); scores are scaled by 1/sqrt(HD); softmax in f32.
void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool, const AttentionKernels& kernels);
void attention_forward(float* out, const float* q, const KvPages& kv, const AttentionSequence* sequences, int64_t B,
                       int64_t NH, int64_t NKV, int64_t HD, ThreadPool& pool);

const AttentionKernels* attention_kernels_for(SimdLevel level);
const AttentionKernels& attention_kernels();
// The active level's kernels without its BF16-product entries: f32 products for every cache dtype,
// so a bf16 cache gives the bits of an f32 cache holding the same values on any CPU. The CUDA
// attention's f32-arithmetic kernels are tested against this.
AttentionKernels attention_kernels_with_f32_products();

extern const AttentionKernels kAttentionAvx2;
extern const AttentionKernels kAttentionAvx512;
// The avx512bf16 level's BF16-product entries (attention_avx512bf16.cpp); its table is the AVX-512
// one with these added (attention_kernels_for).
void attend_chunk_bf16_products_avx512bf16(const uint32_t* q, int64_t R, const uint16_t* k, const uint16_t* v, int64_t J,
                                           int64_t HD, const int32_t* visible, float scale, float* row_max,
                                           float* row_sum, float* out);
void prepare_bf16_product_queries_avx512bf16(const float* q, int64_t R, int64_t G, int64_t token_stride, int64_t HD,
                                             uint32_t* pairs);

}  // namespace s3::cpu
