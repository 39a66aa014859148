// Paged causal GQA attention (native/cpu/attention) at every SIMD level against a naive double
// softmax, and its bit-for-bit invariants: a token's output is the same computed in a prefill
// tile, alone as a decode step, next to other sequences, or with another block layout; and a bf16
// cache gives what an f32 cache holding the same bf16-rounded keys and values gives.
#include <algorithm>
#include <cmath>
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

using s3::tests::runnable_levels;

// Keys/values of one sequence of `length` positions ([length × NKV × HD]) spread over a paged
// pool through a block table of distinct, shuffled blocks, as f32 and as bf16 (RNE) pools.
// With `bf16_exact` the values are rounded to bf16 first, so both pools hold the same numbers.
struct PagedSequence {
  std::vector<float> keys, values;     // [length × NKV × HD] in position order
  std::vector<float> key_pool, value_pool;
  std::vector<uint16_t> bf16_key_pool, bf16_value_pool;
  std::vector<int32_t> table;
  int64_t block_size;

  PagedSequence(int64_t length, int64_t NKV, int64_t HD, int64_t block_size_, uint64_t seed, bool bf16_exact = false)
      : block_size(block_size_) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    keys.resize(size_t(length * NKV * HD));
    values.resize(keys.size());
    for (float& k : keys) k = 2.0f * normal(rng);
    for (float& v : values) v = normal(rng);
    if (bf16_exact) {
      for (float& k : keys) k = s3::bf16_to_f32(s3::f32_to_bf16(k));
      for (float& v : values) v = s3::bf16_to_f32(s3::f32_to_bf16(v));
    }
    const int64_t blocks = (length + block_size - 1) / block_size;
    for (int64_t b = 0; b < blocks; b++) table.push_back(int32_t(blocks - 1 - b));
    key_pool.assign(size_t(blocks * NKV * block_size * HD), NAN);  // unwritten rows must never be read
    value_pool.assign(key_pool.size(), NAN);
    bf16_key_pool.assign(key_pool.size(), s3::f32_to_bf16(NAN));
    bf16_value_pool.assign(key_pool.size(), s3::f32_to_bf16(NAN));
    for (int64_t p = 0; p < length; p++) {
      for (int64_t h = 0; h < NKV; h++) {
        const size_t dst = size_t(((table[size_t(p / block_size)] * NKV + h) * block_size + p % block_size) * HD);
        for (int64_t d = 0; d < HD; d++) {
          key_pool[dst + size_t(d)] = keys[size_t((p * NKV + h) * HD + d)];
          value_pool[dst + size_t(d)] = values[size_t((p * NKV + h) * HD + d)];
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

}  // namespace

TEST(attention_matches_naive_softmax_at_every_level) {
  s3::ThreadPool pool(2);
  const int64_t configs[][3] = {{4, 2, 16}, {8, 2, 128}, {6, 3, 20}, {2, 2, 8}};  // NH, NKV, HD
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    for (const auto& shape : configs) {
      const int64_t NH = shape[0], NKV = shape[1], HD = shape[2], T = 45, start = 8;
      const PagedSequence kv(start + T, NKV, HD, 16, uint64_t(HD));
      const std::vector<float> q = random_queries(T, NH, HD, 3);
      std::vector<float> out(q.size());
      const AttentionSequence seq = kv.sequence(start, T);
      s3::cpu::attention_forward(out.data(), q.data(), kv.pages(), &seq, 1, NH, NKV, HD, pool, kernels);
      for (int64_t t = 0; t < T; t++) {
        for (int64_t h = 0; h < NH; h++) {
          const int64_t g = h / (NH / NKV), position = start + t;
          std::vector<double> score(size_t(position + 1));
          double max = -INFINITY, total = 0.0;
          for (int64_t s = 0; s <= position; s++) {
            double dot = 0.0;
            for (int64_t d = 0; d < HD; d++) {
              dot += double(q[size_t((t * NH + h) * HD + d)]) * kv.keys[size_t((s * NKV + g) * HD + d)];
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
            CHECK_NEAR(out[size_t((t * NH + h) * HD + d)], expected, 2e-5);
          }
        }
      }
    }
  }
}

TEST(attention_token_output_is_the_same_in_prefill_decode_and_any_batch) {
  s3::ThreadPool one(1), two(2);
  const int64_t NH = 8, NKV = 2, HD = 64, T = 70;
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    const PagedSequence paged(T, NKV, HD, 16, 1);
    const PagedSequence contiguous(T, NKV, HD, 80, 1);  // same keys/values, one block
    const std::vector<float> q = random_queries(T, NH, HD, 2);
    std::vector<float> prefill(q.size()), other_layout(q.size());
    const AttentionSequence whole = paged.sequence(0, T);
    s3::cpu::attention_forward(prefill.data(), q.data(), paged.pages(), &whole, 1, NH, NKV, HD, two, kernels);
    const AttentionSequence whole_contiguous = contiguous.sequence(0, T);
    s3::cpu::attention_forward(other_layout.data(), q.data(), contiguous.pages(), &whole_contiguous, 1, NH, NKV, HD,
                               one, kernels);
    CHECK(prefill == other_layout);
    // Each token as a decode step (length 1 after t cached positions).
    for (int64_t t = 0; t < T; t += 7) {
      std::vector<float> step(size_t(NH * HD));
      const AttentionSequence decode = paged.sequence(t, 1);
      const float* q_t = &q[size_t(t * NH * HD)];
      s3::cpu::attention_forward(step.data(), q_t, paged.pages(), &decode, 1, NH, NKV, HD, one, kernels);
      CHECK(std::equal(step.begin(), step.end(), prefill.begin() + t * NH * HD));
    }
    // A chunk from the middle, batched behind a decode step of the same sequence's cache.
    const AttentionSequence batch[] = {paged.sequence(3, 1), paged.sequence(40, 21)};
    std::vector<float> packed(size_t(22 * NH * HD)), packed_q(packed.size());
    std::copy(q.begin() + 3 * NH * HD, q.begin() + 4 * NH * HD, packed_q.begin());
    std::copy(q.begin() + 40 * NH * HD, q.begin() + 61 * NH * HD, packed_q.begin() + NH * HD);
    s3::cpu::attention_forward(packed.data(), packed_q.data(), paged.pages(), batch, 2, NH, NKV, HD, two, kernels);
    CHECK(std::equal(packed.begin(), packed.begin() + NH * HD, prefill.begin() + 3 * NH * HD));
    CHECK(std::equal(packed.begin() + NH * HD, packed.end(), prefill.begin() + 40 * NH * HD));
  }
}

TEST(attention_bf16_cache_equals_f32_cache_of_the_rounded_values_at_every_level) {
  s3::ThreadPool pool(2);
  // NH, NKV, HD: GQA ratios 1, 2, 3, 4 and 8; HD tails (20, 40) as well as whole vectors.
  const int64_t shapes[][3] = {{2, 2, 64}, {16, 8, 128}, {6, 2, 20}, {8, 2, 40}, {16, 2, 64}};
  const int64_t block_sizes[] = {16, 32, 48, 96};  // 96: the whole sequence in one block
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    for (const auto& shape : shapes) {
      const int64_t NH = shape[0], NKV = shape[1], HD = shape[2], start = 5, T = 60;
      for (int64_t block_size : block_sizes) {
        const PagedSequence kv(start + T + 1, NKV, HD, block_size, uint64_t(HD * block_size), true);
        const std::vector<float> q = random_queries(T + 1, NH, HD, uint64_t(NH));
        // A prefill of T tokens after `start` cached ones, and a decode step batched behind it.
        const AttentionSequence batch[] = {kv.sequence(start, T), kv.sequence(start + T, 1)};
        std::vector<float> from_f32(q.size()), from_bf16(q.size());
        s3::cpu::attention_forward(from_f32.data(), q.data(), kv.pages(), batch, 2, NH, NKV, HD, pool, kernels);
        s3::cpu::attention_forward(from_bf16.data(), q.data(), kv.bf16_pages(), batch, 2, NH, NKV, HD, pool, kernels);
        // The kernels widen bf16 exactly and then run the f32 code, so the bits agree; 1e-5
        // relative is the bound the cache's design promises, checked as well for the message.
        CHECK(from_bf16 == from_f32);
        for (size_t i = 0; i < q.size(); i++) {
          CHECK_NEAR(from_bf16[i], from_f32[i], 1e-5 * std::max(1.0f, std::fabs(from_f32[i])));
        }
      }
    }
  }
}

TEST(attention_bf16_cache_of_unrounded_values_stays_within_bf16_tolerance) {
  s3::ThreadPool pool(2);
  const int64_t NH = 16, NKV = 8, HD = 128, T = 70;
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::AttentionKernels& kernels = *s3::cpu::attention_kernels_for(level);
    const PagedSequence kv(T, NKV, HD, 16, 11);  // f32 pool unrounded, bf16 pool RNE of it
    const std::vector<float> q = random_queries(T, NH, HD, 12);
    std::vector<float> from_f32(q.size()), from_bf16(q.size());
    const AttentionSequence seq = kv.sequence(0, T);
    s3::cpu::attention_forward(from_f32.data(), q.data(), kv.pages(), &seq, 1, NH, NKV, HD, pool, kernels);
    s3::cpu::attention_forward(from_bf16.data(), q.data(), kv.bf16_pages(), &seq, 1, NH, NKV, HD, pool, kernels);
    double worst = 0.0;
    for (size_t i = 0; i < q.size(); i++) worst = std::max(worst, double(std::fabs(from_bf16[i] - from_f32[i])));
    // Outputs are convex mixes of N(0, 1) values; bf16 keeps 8 significant bits (2^-9 relative),
    // and the score error moves the weights a little: a few hundredths at most, but never zero.
    CHECK(worst > 0.0);
    CHECK(worst < 0.05);
  }
}
