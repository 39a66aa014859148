// Paged causal GQA attention (native/cpu/attention) at every SIMD level against a naive double
// softmax, and its bit-for-bit invariants: a token's output is the same computed in a prefill
// tile, alone as a decode step, next to other sequences, or with another block layout; a bf16
// cache gives what an f32 cache holding the same bf16-rounded keys and values gives (within a
// stated tolerance at a level with BF16 products, checked also against a double softmax of
// bf16-rounded queries), and an fp8 cache what an f32 cache holding its dequantized values gives; a
// bf16 or fp8 cache of unrounded values stays within that dtype's tolerance of the f32 cache; and
// fp8 row quantization.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "tests/simd_levels.h"
#include "tests/test_framework.h"

namespace {

using s3::cpu::AttentionSequence;
using s3::cpu::KvPages;

using s3::tests::runnable_levels_with_bf16;

// How PagedSequence rounds its keys and values before filling the pools: not at all, to bf16, or
// to their fp8 dequantization (byte × row scale), so that the f32 pool holds what the smaller one
// represents.
enum class Rounding { None, Bf16, Fp8 };

// Keys/values of one sequence of `length` positions ([length × NKV × HD]) spread over a paged
// pool through a block table of distinct, shuffled blocks, as f32, bf16 (RNE) and fp8 pools (each
// (position, KV head) row quantized with its own scale, cpu::quantize_fp8_row). Under Rounding::Fp8
// one row is all zeros and one has an outlier 300× its other values (so they quantize to
// subnormal codes).
struct PagedSequence {
  std::vector<float> keys, values;     // [length × NKV × HD] in position order
  std::vector<float> key_pool, value_pool;
  std::vector<uint16_t> bf16_key_pool, bf16_value_pool;
  std::vector<uint8_t> fp8_key_pool, fp8_value_pool;
  std::vector<float> key_scale_pool, value_scale_pool;  // [blocks × NKV × block_size]
  std::vector<int32_t> table;
  int64_t block_size;

  PagedSequence(int64_t length, int64_t NKV, int64_t HD, int64_t block_size_, uint64_t seed,
                Rounding rounding = Rounding::None)
      : block_size(block_size_) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    keys.resize(size_t(length * NKV * HD));
    values.resize(keys.size());
    for (float& k : keys) k = 2.0f * normal(rng);
    for (float& v : values) v = normal(rng);
    if (rounding == Rounding::Bf16) {
      for (float& k : keys) k = s3::bf16_to_f32(s3::f32_to_bf16(k));
      for (float& v : values) v = s3::bf16_to_f32(s3::f32_to_bf16(v));
    }
    if (rounding == Rounding::Fp8 && length > 5) {
      std::fill_n(keys.begin() + 3 * NKV * HD, HD, 0.0f);  // position 3, head 0: a zero row
      std::fill_n(values.begin() + 3 * NKV * HD, HD, 0.0f);
      keys[size_t(5 * NKV * HD)] *= 300.0f;  // position 5, head 0: an outlier
      values[size_t(5 * NKV * HD + HD - 1)] *= 300.0f;
    }
    const int64_t blocks = (length + block_size - 1) / block_size;
    for (int64_t b = 0; b < blocks; b++) table.push_back(int32_t(blocks - 1 - b));
    const size_t rows = size_t(blocks * NKV * block_size);
    key_pool.assign(rows * size_t(HD), NAN);  // unwritten rows must never be read
    value_pool.assign(key_pool.size(), NAN);
    bf16_key_pool.assign(key_pool.size(), s3::f32_to_bf16(NAN));
    bf16_value_pool.assign(key_pool.size(), s3::f32_to_bf16(NAN));
    fp8_key_pool.assign(key_pool.size(), 0x7F);  // NaN codes
    fp8_value_pool.assign(key_pool.size(), 0x7F);
    key_scale_pool.assign(rows, NAN);
    value_scale_pool.assign(rows, NAN);
    for (int64_t p = 0; p < length; p++) {
      for (int64_t h = 0; h < NKV; h++) {
        const size_t row = size_t((table[size_t(p / block_size)] * NKV + h) * block_size + p % block_size);
        const size_t dst = row * size_t(HD), src = size_t((p * NKV + h) * HD);
        key_scale_pool[row] = s3::cpu::quantize_fp8_row(&keys[src], HD, &fp8_key_pool[dst]);
        value_scale_pool[row] = s3::cpu::quantize_fp8_row(&values[src], HD, &fp8_value_pool[dst]);
        for (int64_t d = 0; d < HD; d++) {
          if (rounding == Rounding::Fp8) {
            keys[src + size_t(d)] = s3::fp8e4m3_to_f32(fp8_key_pool[dst + size_t(d)]) * key_scale_pool[row];
            values[src + size_t(d)] = s3::fp8e4m3_to_f32(fp8_value_pool[dst + size_t(d)]) * value_scale_pool[row];
          }
          key_pool[dst + size_t(d)] = keys[src + size_t(d)];
          value_pool[dst + size_t(d)] = values[src + size_t(d)];
          bf16_key_pool[dst + size_t(d)] = s3::f32_to_bf16(key_pool[dst + size_t(d)]);
          bf16_value_pool[dst + size_t(d)] = s3::f32_to_bf16(value_pool[dst + size_t(d)]);
        }
      }
    }
  }
  KvPages pages() const { return {key_pool.data(), value_pool.data(), block_size}; }
  KvPages bf16_pages() const {
    return {bf16_key_pool.data(), bf16_value_pool.data(), block_size, s3::cpu::KvDtype::Bf16};
  }
  KvPages fp8_pages() const {
    return {fp8_key_pool.data(), fp8_value_pool.data(), block_size, s3::cpu::KvDtype::Fp8E4M3,
            key_scale_pool.data(), value_scale_pool.data()};
  }
  KvPages pages(s3::cpu::KvDtype dtype) const {  // the pool of `dtype`
    if (dtype == s3::cpu::KvDtype::Bf16) return bf16_pages();
    if (dtype == s3::cpu::KvDtype::Fp8E4M3) return fp8_pages();
    return pages();
  }
  AttentionSequence sequence(int64_t start, int64_t length) const {
    return {start, length, table.data(), int64_t(table.size())};
  }
};

std::vector<float> random_queries(int64_t T, int64_t NH, int64_t HD, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(size_t(T * NH * HD));
  for (float& v : q) v = 2.0f * normal(rng);
  return q;
}

// Attention over a `dtype` cache (bf16 or fp8) against the f32 cache holding the values it
// represents (bf16-rounded, or fp8-dequantized with a zero row and an outlier row), at every
// level, shape and block size: a prefill of T tokens after `start` cached ones with a decode step
// batched behind it gives the same bits (and so within 1e-5 relative), and every token again as a
// decode step of its own gives the bits of the prefill. A bf16 cache at a level with BF16 products
// (queries and weights rounded to bf16) stays within `products_bound` relative of the f32 cache
// instead of equal. `seed_offset` gives each dtype its own keys, values and queries.
void check_cache_equals_f32_cache_of_its_values(s3::cpu::KvDtype dtype, uint64_t seed_offset,
                                                double products_bound = 0.0) {
  s3::ThreadPool pool(2);
  // NH, NKV, HD: GQA ratios 1, 2, 3, 4 and 8; HD tails (20, 40) as well as whole vectors.
  const int64_t shapes[][3] = {{2, 2, 64}, {16, 8, 128}, {6, 2, 20}, {8, 2, 40}, {16, 2, 64}};
  const int64_t block_sizes[] = {16, 32, 48, 96};  // 96: the whole sequence in one block
  const Rounding rounding = dtype == s3::cpu::KvDtype::Bf16 ? Rounding::Bf16 : Rounding::Fp8;
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    const bool products = dtype == s3::cpu::KvDtype::Bf16 && kernels.attend_chunk_bf16_products != nullptr;
    double worst = 0.0;
    for (const auto& shape : shapes) {
      const int64_t NH = shape[0], NKV = shape[1], HD = shape[2], start = 5, T = 60;
      for (int64_t block_size : block_sizes) {
        const PagedSequence kv(start + T + 1, NKV, HD, block_size, uint64_t(HD * block_size) + seed_offset, rounding);
        const std::vector<float> q = random_queries(T + 1, NH, HD, uint64_t(NH) + seed_offset);
        const AttentionSequence batch[] = {kv.sequence(start, T), kv.sequence(start + T, 1)};
        std::vector<float> from_f32(q.size()), from_dtype(q.size());
        s3::cpu::attention_forward(from_f32.data(), q.data(), kv.pages(), batch, 2, NH, NKV, HD, pool, kernels);
        s3::cpu::attention_forward(from_dtype.data(), q.data(), kv.pages(dtype), batch, 2, NH, NKV, HD, pool, kernels);
        if (!products) CHECK(from_dtype == from_f32);
        const double bound = products ? products_bound : 1e-5;
        for (size_t i = 0; i < q.size(); i++) {
          const double scaled = std::fabs(from_dtype[i] - from_f32[i]) / std::max(1.0f, std::fabs(from_f32[i]));
          worst = s3test::max_or_nan(worst, scaled);
          CHECK(scaled <= bound);
        }
        for (int64_t t = 0; t <= T; t += 6) {
          std::vector<float> step(size_t(NH * HD));
          const AttentionSequence decode = kv.sequence(start + t, 1);
          s3::cpu::attention_forward(step.data(), &q[size_t(t * NH * HD)], kv.pages(dtype), &decode, 1, NH, NKV, HD,
                                     pool, kernels);
          CHECK(std::equal(step.begin(), step.end(), from_dtype.begin() + t * NH * HD));
        }
      }
    }
    std::printf("  %s: largest difference from the f32 cache %.3g (relative above 1)\n", kernels.name, worst);
  }
}

// Attention over a `dtype` cache (bf16 RNE or fp8 row-quantized) of unrounded keys and values
// against the f32 cache of those values, at every level: the largest output difference is above
// zero (the rounding shows) and below `bound`, the dtype's tolerance.
void check_cache_of_unrounded_values_within(s3::cpu::KvDtype dtype, double bound) {
  s3::ThreadPool pool(2);
  const int64_t NH = 16, NKV = 8, HD = 128, T = 70;
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    const PagedSequence kv(T, NKV, HD, 16, 11);  // f32 pool unrounded, bf16/fp8 pools rounded from it
    const std::vector<float> q = random_queries(T, NH, HD, 12);
    std::vector<float> from_f32(q.size()), from_dtype(q.size());
    const AttentionSequence seq = kv.sequence(0, T);
    s3::cpu::attention_forward(from_f32.data(), q.data(), kv.pages(), &seq, 1, NH, NKV, HD, pool, kernels);
    s3::cpu::attention_forward(from_dtype.data(), q.data(), kv.pages(dtype), &seq, 1, NH, NKV, HD, pool, kernels);
    double worst = 0.0;
    for (size_t i = 0; i < q.size(); i++) worst = s3test::max_or_nan(worst, double(std::fabs(from_dtype[i] - from_f32[i])));
    CHECK(worst > 0.0);
    CHECK(worst < bound);
  }
}

// Attention over `dtype` pages with `kernels` against a softmax in double of the same keys and
// values (q rounded to bf16 first where `round_queries`): every output within `bound`; returns the
// largest difference.
double check_against_naive_softmax(const s3::cpu::AttentionKernels& kernels, s3::cpu::KvDtype dtype,
                                   bool round_queries, double bound) {
  s3::ThreadPool pool(2);
  const int64_t configs[][3] = {{4, 2, 16}, {8, 2, 128}, {6, 3, 20}, {2, 2, 8}, {4, 1, 40}};  // NH, NKV, HD
  const Rounding rounding = dtype == s3::cpu::KvDtype::Bf16 ? Rounding::Bf16 : Rounding::None;
  double worst = 0.0;
  for (const auto& shape : configs) {
    const int64_t NH = shape[0], NKV = shape[1], HD = shape[2], T = 45, start = 8;
    const PagedSequence kv(start + T, NKV, HD, 16, uint64_t(HD), rounding);
    const std::vector<float> q = random_queries(T, NH, HD, 3);
    std::vector<float> out(q.size());
    const AttentionSequence seq = kv.sequence(start, T);
    s3::cpu::attention_forward(out.data(), q.data(), kv.pages(dtype), &seq, 1, NH, NKV, HD, pool, kernels);
    for (int64_t t = 0; t < T; t++) {
      for (int64_t h = 0; h < NH; h++) {
        const int64_t g = h / (NH / NKV), position = start + t;
        std::vector<double> score(size_t(position + 1));
        double max = -INFINITY, total = 0.0;
        for (int64_t s = 0; s <= position; s++) {
          double dot = 0.0;
          for (int64_t d = 0; d < HD; d++) {
            const float query = q[size_t((t * NH + h) * HD + d)];
            dot += double(round_queries ? s3::bf16_to_f32(s3::f32_to_bf16(query)) : query) *
                   kv.keys[size_t((s * NKV + g) * HD + d)];
          }
          score[size_t(s)] = dot / std::sqrt(double(HD));
          max = std::max(max, score[size_t(s)]);
        }
        for (double& s : score) total += (s = std::exp(s - max));
        for (int64_t d = 0; d < HD; d++) {
          double expected = 0.0;
          for (int64_t s = 0; s <= position; s++) {
            expected += score[size_t(s)] / total * kv.values[size_t((s * NKV + g) * HD + d)];
          }
          const double difference = std::fabs(out[size_t((t * NH + h) * HD + d)] - expected);
          worst = s3test::max_or_nan(worst, difference);
          CHECK(difference <= bound);
        }
      }
    }
  }
  return worst;
}

}  // namespace

TEST(attention_matches_naive_softmax_at_every_level) {
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    check_against_naive_softmax(kernels, s3::cpu::KvDtype::F32, /*round_queries=*/false, 2e-5);
  }
}

TEST(attention_with_bf16_products_matches_naive_softmax_of_bf16_queries) {
  // A bf16 cache at a level that multiplies in BF16: the queries are rounded to bf16 (the
  // reference does the same) and each weight exp(score − max) is rounded to 8 significant bits
  // (2^-9 relative, which the reference does not do): outputs are convex mixes of N(0, 1) values,
  // so they move by well under 1e-2 (2.5e-3 measured on the Zen 5 host of docs/benchmarks.md).
  bool ran = false;
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    if (kernels.attend_chunk_bf16_products == nullptr) continue;
    ran = true;
    const double worst = check_against_naive_softmax(kernels, s3::cpu::KvDtype::Bf16, /*round_queries=*/true, 1e-2);
    std::printf("  %s: largest difference %.3g\n", kernels.name, worst);
  }
  if (!ran) SKIP("no level with BF16 products on this CPU (AVX512-BF16 is missing)");
}

TEST(attention_token_output_is_the_same_in_prefill_decode_and_any_batch) {
  s3::ThreadPool one(1), two(2);
  const int64_t NH = 8, NKV = 2, HD = 64, T = 70;
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    for (s3::cpu::KvDtype dtype : {s3::cpu::KvDtype::F32, s3::cpu::KvDtype::Bf16}) {
      const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
      const PagedSequence paged(T, NKV, HD, 16, 1);
      const PagedSequence contiguous(T, NKV, HD, 80, 1);  // same keys/values, one block
      const std::vector<float> q = random_queries(T, NH, HD, 2);
      std::vector<float> prefill(q.size()), other_layout(q.size());
      const AttentionSequence whole = paged.sequence(0, T);
      s3::cpu::attention_forward(prefill.data(), q.data(), paged.pages(dtype), &whole, 1, NH, NKV, HD, two, kernels);
      const AttentionSequence whole_contiguous = contiguous.sequence(0, T);
      s3::cpu::attention_forward(other_layout.data(), q.data(), contiguous.pages(dtype), &whole_contiguous, 1, NH, NKV, HD,
                                 one, kernels);
      CHECK(prefill == other_layout);
      // Each token as a decode step (length 1 after t cached positions).
      for (int64_t t = 0; t < T; t += 7) {
        std::vector<float> step(size_t(NH * HD));
        const AttentionSequence decode = paged.sequence(t, 1);
        const float* q_t = &q[size_t(t * NH * HD)];
        s3::cpu::attention_forward(step.data(), q_t, paged.pages(dtype), &decode, 1, NH, NKV, HD, one, kernels);
        CHECK(std::equal(step.begin(), step.end(), prefill.begin() + t * NH * HD));
      }
      // A chunk from the middle, batched behind a decode step of the same sequence's cache.
      const AttentionSequence batch[] = {paged.sequence(3, 1), paged.sequence(40, 21)};
      std::vector<float> packed(size_t(22 * NH * HD)), packed_q(packed.size());
      std::copy(q.begin() + 3 * NH * HD, q.begin() + 4 * NH * HD, packed_q.begin());
      std::copy(q.begin() + 40 * NH * HD, q.begin() + 61 * NH * HD, packed_q.begin() + NH * HD);
      s3::cpu::attention_forward(packed.data(), packed_q.data(), paged.pages(dtype), batch, 2, NH, NKV, HD, two, kernels);
      CHECK(std::equal(packed.begin(), packed.begin() + NH * HD, prefill.begin() + 3 * NH * HD));
      CHECK(std::equal(packed.begin() + NH * HD, packed.end(), prefill.begin() + 40 * NH * HD));
    }
  }
}

TEST(attention_bf16_cache_equals_f32_cache_of_the_rounded_values_at_every_level) {
  // The f32-product kernels widen bf16 exactly and then run the f32 code, so the bits agree; 1e-5
  // relative is the bound the cache's design promises, checked as well for the message. With BF16
  // products (avx512bf16) queries and weights are rounded to 8 significant bits, which moves the
  // scores (std 4 here) by a few thousandths and outputs by up to 0.026 (measured): bound 0.05.
  check_cache_equals_f32_cache_of_its_values(s3::cpu::KvDtype::Bf16, /*seed_offset=*/0, /*products_bound=*/0.05);
}

TEST(attention_bf16_cache_of_unrounded_values_stays_within_bf16_tolerance) {
  // Outputs are convex mixes of N(0, 1) values; bf16 keeps 8 significant bits (2^-9 relative),
  // and the score error moves the weights a little: a few hundredths at most, but never zero.
  check_cache_of_unrounded_values_within(s3::cpu::KvDtype::Bf16, 0.05);
}

TEST(attention_fp8_cache_equals_f32_cache_of_the_dequantized_values_at_every_level) {
  // GQA ratio 8: decode steps of 8 rows take the AVX-512 kernel's widen-into-stack path, the
  // others widen in registers.
  check_cache_equals_f32_cache_of_its_values(s3::cpu::KvDtype::Fp8E4M3, /*seed_offset=*/1);
}

TEST(attention_fp8_widens_every_code_exactly_at_every_level) {
  // One block of 16 positions × HD 16 holds each of the 256 codes once in the keys and once in
  // the values (in another order; the NaN codes 0x7F and 0xFF, which quantization never writes,
  // replaced by ±0), with a different scale per row. Token 0 sees only itself, so its output is
  // value row 0 dequantized, exactly; every output equals the f32 cache's of the dequantized values.
  s3::ThreadPool pool(1);
  const int64_t NH = 2, NKV = 1, HD = 16, T = 16;
  std::vector<uint8_t> key_bytes(static_cast<size_t>(T * HD)), value_bytes(key_bytes.size());
  std::vector<float> key_scales(static_cast<size_t>(T)), value_scales(static_cast<size_t>(T));
  std::vector<float> keys(key_bytes.size()), values(keys.size());
  for (int64_t i = 0; i < T * HD; i++) {
    const uint8_t code = uint8_t(i), reversed = uint8_t(255 - i);
    key_bytes[size_t(i)] = (code & 0x7F) == 0x7F ? uint8_t(code & 0x80) : code;
    value_bytes[size_t(i)] = (reversed & 0x7F) == 0x7F ? uint8_t(reversed & 0x80) : reversed;
  }
  for (int64_t p = 0; p < T; p++) {
    key_scales[size_t(p)] = 0.01f * float(p + 1) / 3.0f;
    value_scales[size_t(p)] = 0.37f / float(p + 1);
  }
  for (int64_t i = 0; i < T * HD; i++) {
    keys[size_t(i)] = s3::fp8e4m3_to_f32(key_bytes[size_t(i)]) * key_scales[size_t(i / HD)];
    values[size_t(i)] = s3::fp8e4m3_to_f32(value_bytes[size_t(i)]) * value_scales[size_t(i / HD)];
  }
  const int32_t table[] = {0};
  const AttentionSequence seq{0, T, table, 1};
  const KvPages f32{keys.data(), values.data(), T};
  const KvPages fp8{key_bytes.data(), value_bytes.data(), T, s3::cpu::KvDtype::Fp8E4M3, key_scales.data(),
                    value_scales.data()};
  const std::vector<float> q = random_queries(T, NH, HD, 9);
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    std::vector<float> from_f32(q.size()), from_fp8(q.size());
    s3::cpu::attention_forward(from_f32.data(), q.data(), f32, &seq, 1, NH, NKV, HD, pool, kernels);
    s3::cpu::attention_forward(from_fp8.data(), q.data(), fp8, &seq, 1, NH, NKV, HD, pool, kernels);
    CHECK(from_fp8 == from_f32);
    for (int64_t h = 0; h < NH; h++) {
      CHECK(std::equal(values.begin(), values.begin() + HD, from_fp8.begin() + h * HD));
    }
    // Decode steps (2 rows, widened in registers) read the same values.
    for (int64_t t = 0; t < T; t++) {
      std::vector<float> step(size_t(NH * HD));
      const AttentionSequence decode{t, 1, table, 1};
      s3::cpu::attention_forward(step.data(), &q[size_t(t * NH * HD)], fp8, &decode, 1, NH, NKV, HD, pool, kernels);
      CHECK(std::equal(step.begin(), step.end(), from_f32.begin() + t * NH * HD));
    }
  }
}

TEST(attention_fp8_cache_of_unquantized_values_stays_within_fp8_tolerance) {
  // e4m3 keeps 4 significant bits (2^-4 relative, 16× bf16's step); scores here have a standard
  // deviation of 4, so their error moves peaked weights: 0.41 measured at every level.
  check_cache_of_unrounded_values_within(s3::cpu::KvDtype::Fp8E4M3, 0.5);
}

TEST(fp8_row_quantization_rounds_saturates_and_scales) {
  // Every finite code's value in one row with ±448 in it: the scale is 1 and the bytes are the codes,
  // subnormals (0x01..0x07: k × 2^-9) included; times a power of two, only the scale changes.
  std::vector<float> row;
  std::vector<uint8_t> codes;
  for (int code = 0; code < 256; code++) {
    if ((code & 0x7F) == 0x7F) continue;
    codes.push_back(uint8_t(code));
    row.push_back(s3::fp8e4m3_to_f32(uint8_t(code)));
  }
  std::vector<uint8_t> bytes(row.size());
  CHECK_EQ(s3::cpu::quantize_fp8_row(row.data(), int64_t(row.size()), bytes.data()), 1.0f);
  CHECK(bytes == codes);
  for (float& x : row) x *= 0.125f;
  CHECK_EQ(s3::cpu::quantize_fp8_row(row.data(), int64_t(row.size()), bytes.data()), 0.125f);
  CHECK(bytes == codes);
  // Known values at scale 1: round to nearest even between codes and in the subnormal range.
  const float known[] = {448.0f, -448.0f, 1.0f, 1.0625f, 1.1875f, -0.015625f, 0.001953125f, 0.0009765625f,
                         0.0029296875f, -0.0048828125f, 0.0f};
  const uint8_t expected[] = {0x7E, 0xFE, 0x38, 0x38, 0x3A, 0x88, 0x01, 0x00, 0x02, 0x82, 0x00};
  uint8_t got[11];
  CHECK_EQ(s3::cpu::quantize_fp8_row(known, 11, got), 1.0f);
  for (int i = 0; i < 11; i++) CHECK_EQ(got[i], expected[i]);
  // The largest magnitude maps to ±448 exactly (saturating what division rounds past it).
  const float wide[] = {1000.0f, -1000.0f, 1.0f, 0.0f};
  uint8_t wide_bytes[4];
  const float wide_scale = s3::cpu::quantize_fp8_row(wide, 4, wide_bytes);
  CHECK_EQ(wide_scale, 1000.0f / 448.0f);
  CHECK_EQ(wide_bytes[0], uint8_t(0x7E));
  CHECK_EQ(wide_bytes[1], uint8_t(0xFE));
  CHECK_EQ(wide_bytes[2], s3::f32_to_fp8e4m3(1.0f / wide_scale));
  CHECK_EQ(s3::f32_to_fp8e4m3(500.0f), uint8_t(0x7E));
  CHECK_EQ(s3::f32_to_fp8e4m3(-1e30f), uint8_t(0xFE));
  // A zero row: scale 1, bytes ±0. A row holding inf or NaN: scale NaN, bytes 0 (dequantizes to NaN).
  const float zeros[] = {0.0f, -0.0f, 0.0f};
  uint8_t zero_bytes[3] = {1, 1, 1};
  CHECK_EQ(s3::cpu::quantize_fp8_row(zeros, 3, zero_bytes), 1.0f);
  CHECK(zero_bytes[0] == 0 && zero_bytes[1] == 0x80 && zero_bytes[2] == 0);
  const float broken[] = {1.0f, INFINITY, 2.0f};
  uint8_t broken_bytes[3] = {1, 1, 1};
  CHECK(std::isnan(s3::cpu::quantize_fp8_row(broken, 3, broken_bytes)));
  CHECK(broken_bytes[0] == 0 && broken_bytes[1] == 0 && broken_bytes[2] == 0);
}

TEST(fp8_widening_through_f16_bits_equals_fp8e4m3_to_f32_for_every_code) {
  // The kernels' widening: sign to bit 15, exponent and mantissa to bits 13..7 of an f16, whose
  // value × 2^8 is the e4m3 value, subnormals included. The NaN codes (never stored) come out ±480.
  for (int code = 0; code < 256; code++) {
    const uint8_t b = uint8_t(code);
    const uint16_t f16 = uint16_t(((b & 0x80) << 8) | ((b & 0x7F) << 7));
    // As the SIMD code builds it: sign-extend to 16 bits, shift left 7, clear bit 14.
    CHECK_EQ(uint16_t((uint16_t(int16_t(int8_t(b))) << 7) & 0xBF80), f16);
    const float widened = s3::f16_to_f32(f16) * 256.0f;
    if ((b & 0x7F) == 0x7F) {
      CHECK_EQ(widened, (b & 0x80) ? -480.0f : 480.0f);
    } else {
      CHECK_EQ(s3::f32_bits(widened), s3::f32_bits(s3::fp8e4m3_to_f32(b)));
    }
  }
}
