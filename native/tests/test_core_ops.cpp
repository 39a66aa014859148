// test_core_ops.cpp: the math core/ops/ shares between the CPU and CUDA kernels, checked on the CPU
// (the GPU runs the same functions): the chunked inverse-CDF search the CUDA sampler runs, run here,
// draws exactly the tokens of cpu::sample_forward; split softmax states merged with the shared
// factors equal one pass over all keys; FP8 row scales' special cases; the padded 128 × 128 and the
// transposed 1 × 128 scale layouts of cuBLASLt's block-scaled FP8 GEMM; the KV row index.
#include <cmath>
#include <random>
#include <vector>

#include "core/ops/fp8_block_scales.h"
#include "core/ops/fp8_rows.h"
#include "core/ops/kv_layout.h"
#include "core/ops/online_softmax.h"
#include "core/ops/sampling.h"
#include "core/philox.h"
#include "cpu/sampling.h"
#include "tests/test_framework.h"

namespace ops = s3::ops;

namespace {

// What the CUDA sampler does for one row (cuda/sampling.cu): chunk totals summed each on its own,
// their prefix in chunk order, then per draw the chunk and the id within it.
std::vector<int32_t> chunked_draws(const std::vector<float>& logits, float temperature, uint64_t seed, uint64_t index,
                                   int draws) {
  const int64_t V = int64_t(logits.size()), n = ops::sample_chunks(V);
  float max = -INFINITY;
  for (float l : logits) max = std::max(max, l);
  std::vector<double> prefix(size_t(n + 1), 0.0);
  for (int64_t c = 0; c < n; c++) {
    double running = 0.0;
    for (int64_t j = c * ops::kSampleChunk; j < std::min(V, (c + 1) * ops::kSampleChunk); j++) {
      running += ops::sample_weight(logits[size_t(j)], max, temperature);
    }
    prefix[size_t(c + 1)] = prefix[size_t(c)] + running;
  }
  std::vector<int32_t> tokens;
  for (int i = 0; i < draws; i++) {
    const double target = double(s3::philox_uniform(seed, index, uint32_t(i), s3::cpu::kSamplingStream)) * prefix[size_t(n)];
    const int64_t c = ops::sample_find_chunk(prefix.data(), n, target);
    tokens.push_back(int32_t(ops::sample_find_in_chunk(logits.data(), c * ops::kSampleChunk,
                                                       std::min(V, (c + 1) * ops::kSampleChunk), prefix[size_t(c)], target,
                                                       max, temperature)));
  }
  return tokens;
}

}  // namespace

TEST(ops_chunked_inverse_cdf_draws_the_tokens_of_the_cpu_sampler) {
  std::mt19937 rng(3);
  for (int64_t V : {int64_t(7), int64_t(1024), int64_t(1025), int64_t(5000), int64_t(151936)}) {
    std::normal_distribution<float> normal(0.0f, V > 10000 ? 3.0f : 1.5f);
    std::vector<float> logits(static_cast<size_t>(V));
    for (float& l : logits) l = normal(rng);
    if (V > 2) logits[1] = -INFINITY;  // a weight of exactly 0
    for (float temperature : {0.3f, 1.0f, 2.5f}) {
      const int draws = 33;
      std::vector<s3::cpu::TokenDraw> cpu(draws);
      s3::cpu::sample_forward(cpu.data(), draws, logits.data(), V, temperature, 77, uint64_t(V));
      const std::vector<int32_t> chunked = chunked_draws(logits, temperature, 77, uint64_t(V), draws);
      for (int i = 0; i < draws; i++) CHECK_EQ(chunked[size_t(i)], cpu[size_t(i)].token);
    }
  }
}

TEST(ops_softmax_merge_of_split_states_equals_one_pass) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  const int keys = 300, HD = 4;
  std::vector<float> s(keys), v(keys * HD);
  for (float& x : s) x = normal(rng);
  for (float& x : v) x = normal(rng);
  double max = -INFINITY, total = 0.0, want[HD] = {0, 0, 0, 0};
  for (float x : s) max = std::max(max, double(x));
  for (int j = 0; j < keys; j++) {
    const double w = std::exp(double(s[j]) - max);
    total += w;
    for (int d = 0; d < HD; d++) want[d] += w * v[j * HD + d];
  }
  // States over [0, 128), [128, 256), [256, 300) and an empty split, merged in order.
  float m = -INFINITY, l = 0.0f, o[HD] = {0, 0, 0, 0};
  for (int begin : {0, 128, 256, 300}) {
    float m_s = -INFINITY, l_s = 0.0f, o_s[HD] = {0, 0, 0, 0};
    for (int j = begin; j < std::min(keys, begin + 128); j++) m_s = std::max(m_s, s[j]);
    for (int j = begin; j < std::min(keys, begin + 128); j++) {
      const float w = std::exp(s[j] - m_s);
      l_s += w;
      for (int d = 0; d < HD; d++) o_s[d] += w * v[j * HD + d];
    }
    const ops::SoftmaxMergeFactors f = ops::softmax_merge_factors(m, m_s);
    l = l * f.f_a + l_s * f.f_b;
    for (int d = 0; d < HD; d++) o[d] = o[d] * f.f_a + o_s[d] * f.f_b;
    m = f.m;
  }
  CHECK_NEAR(m, max, 0.0);
  for (int d = 0; d < HD; d++) CHECK_NEAR(o[d] / l, want[d] / total, 1e-5);
  const ops::SoftmaxMergeFactors empty = ops::softmax_merge_factors(-INFINITY, -INFINITY);
  CHECK(empty.f_a == 0.0f && empty.f_b == 0.0f);
}

TEST(ops_fp8_row_scale_covers_zero_tiny_and_non_finite_rows) {
  CHECK_EQ(ops::fp8_row_scale(448.0f, true), 1.0f);
  CHECK_EQ(ops::fp8_row_scale(0.0f, true), 1.0f);
  CHECK_EQ(ops::fp8_row_scale(1e-44f, true), 1.0f);  // the scale would underflow to 0
  CHECK(std::isnan(ops::fp8_row_scale(1.0f, false)));
  CHECK_EQ(ops::fp8_row_encode(448.0f, 1.0f, true), uint8_t(0x7E));
  CHECK_EQ(ops::fp8_row_encode(-2.0f, 0.5f, true), s3::f32_to_fp8e4m3(-4.0f));
  CHECK_EQ(ops::fp8_row_encode(INFINITY, NAN, false), uint8_t(0));
}

TEST(ops_fp8_weight_scales_pad_the_k_blocks_to_a_multiple_of_4) {
  // K = 256 (2 blocks, the tiny and small shapes' trap): stride 4, so rows do not match the checkpoint's.
  CHECK_EQ(ops::weight_scale_stride(256), int64_t(4));
  CHECK_EQ(ops::weight_scale_index(1, 1, 256), int64_t(5));
  CHECK_EQ(ops::weight_scale_count(300, 256), int64_t(3 * 4));
  // K = 1024 (8 blocks, Qwen3-0.6B's hidden size): no padding, the checkpoint's row-major order.
  CHECK_EQ(ops::weight_scale_stride(1024), int64_t(8));
  CHECK_EQ(ops::weight_scale_index(2, 3, 1024), int64_t(2 * 8 + 3));
  CHECK_EQ(ops::weight_scale_stride(3072), int64_t(24));
  CHECK_EQ(ops::weight_scale_stride(160), int64_t(4));  // a partial block counts
}

TEST(ops_fp8_activation_scales_are_transposed_with_tokens_padded_to_4) {
  CHECK_EQ(ops::fp8_activation_rows(1), int64_t(4));
  CHECK_EQ(ops::fp8_activation_rows(8), int64_t(8));
  CHECK_EQ(ops::fp8_activation_rows(9), int64_t(12));
  // Token 2's K-block 3 of a 12-row operand: 3 · 12 + 2.
  CHECK_EQ(ops::activation_scale_index(2, 3, 12), int64_t(38));
}

TEST(ops_kv_row_walks_layers_blocks_heads_and_positions_in_that_order) {
  const int64_t num_blocks = 5, heads = 3, block_size = 16;
  CHECK_EQ(ops::kv_row(0, 0, 0, 1, num_blocks, heads, block_size), int64_t(1));
  CHECK_EQ(ops::kv_row(0, 0, 1, 0, num_blocks, heads, block_size), int64_t(16));
  CHECK_EQ(ops::kv_row(0, 1, 0, 0, num_blocks, heads, block_size), int64_t(48));
  CHECK_EQ(ops::kv_row(1, 0, 0, 0, num_blocks, heads, block_size), int64_t(5 * 48));
  const int32_t table[] = {4, 2, 0};
  CHECK_EQ(ops::kv_block_of(table, 17, block_size), 2);
}
