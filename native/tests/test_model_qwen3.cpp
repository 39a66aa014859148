// The Qwen3 CPU forward pass (native/model/qwen3_forward) against the naive double-precision
// reference of naive_qwen3.h on random tiny and small models in every weight dtype, and the
// invariants the engine relies on: causality, incremental decode equal to prefill, batched
// equal to alone (bit for bit), paged equal to contiguous, thread count irrelevant; and the bf16
// and fp8 KV caches: RNE (fp8: per-row scaled) storage in the f32 layout, logits near the f32
// cache's, decode equal to prefill.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "model/kv_cache.h"
#include "model/qwen3_forward.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

namespace {

using s3::DType;
using s3::cpu::AttentionSequence;
using s3::model::KvCache;
using s3::model::Qwen3Batch;
using s3::model::Qwen3Config;
using s3::model::Qwen3Weights;
using s3::model::Qwen3Workspace;

std::vector<int32_t> random_tokens(size_t count, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> tokens(count);
  for (int32_t& t : tokens) t = int32_t(rng() % uint64_t(vocab));
  return tokens;
}

Qwen3Weights weights_of(const s3test::TestModel& model) {
  return Qwen3Weights::from_tensors(model.config, model.named(), Qwen3Weights::Storage::Borrow, "test model");
}

// One sequence through one prefill call (contiguous cache), logits of every position: [T × V].
std::vector<float> prefill_logits(const Qwen3Weights& weights, const std::vector<int32_t>& tokens,
                                  s3::ThreadPool& pool, int64_t rope_offset = 0,
                                  s3::cpu::KvDtype kv_dtype = s3::cpu::KvDtype::F32) {
  const int64_t T = int64_t(tokens.size()), V = weights.config().vocab_size;
  const int64_t block_size = (T + 15) / 16 * 16;
  KvCache cache(weights.config(), block_size, 1, kv_dtype);
  const int32_t table[] = {0};
  const AttentionSequence seq{0, T, table, 1};
  std::vector<int64_t> rows(static_cast<size_t>(T));
  std::iota(rows.begin(), rows.end(), 0);
  Qwen3Workspace workspace;
  std::vector<float> logits(size_t(T * V));
  const Qwen3Batch batch{tokens.data(), &seq, 1, rows.data(), T, &rope_offset};
  s3::model::qwen3_forward(weights, batch, cache, workspace, logits.data(), pool);
  return logits;
}

// Largest |got − reference| over every logit, relative to the largest |reference| of its row.
double worst_relative_error(const std::vector<float>& got, const std::vector<std::vector<double>>& reference) {
  double worst = 0.0;
  const size_t V = reference[0].size();
  for (size_t t = 0; t < reference.size(); t++) {
    double scale = 0.0;
    for (double r : reference[t]) scale = std::max(scale, std::fabs(r));
    for (size_t i = 0; i < V; i++) worst = s3test::max_or_nan(worst, std::fabs(got[t * V + i] - reference[t][i]) / scale);
  }
  return worst;
}

// At the avx512bf16 level the reference rounds matmul inputs to BF16 where the level's matmul
// does (BF16 and FP8 weights), which it then matches to ~1e-7 on the tiny shape. On larger shapes
// a few activations sit within f32-vs-double noise of a BF16 rounding boundary and round the other
// way, moving a product by 2⁻⁸ that later layers carry: measured 5.3e-4 (hidden 160, 3-block MLP)
// and 1.5e-3 (small, 4 layers) of the largest |logit|, so those tests state a bf16_level_tolerance
// (5e-3); every other level and dtype keeps `tolerance`. On the tiny shape the avx512bf16 level stays
// under 1e-4, but the amx level, whose tile instruction accumulates in its own order, did not (the
// H200 host's Xeon, 2026-12-04): the tiny BF16 test states the same 5e-3.
void check_against_reference(const Qwen3Config& config, DType matrix_dtype, DType vector_dtype, size_t T,
                             double tolerance, double bf16_level_tolerance = 0.0) {
  const s3test::TestModel model = s3test::make_test_model(config, matrix_dtype, 7, vector_dtype);
  const Qwen3Weights weights = weights_of(model);
  const std::vector<int32_t> tokens = random_tokens(T, config.vocab_size, 11);
  s3::ThreadPool pool(2);
  const std::vector<float> logits = prefill_logits(weights, tokens, pool);
  const bool bf16_inputs = s3::cpu::matmul_kernels().rounds_input_to_bf16;
  const bool bf16_products = bf16_inputs && (matrix_dtype == DType::BF16 || matrix_dtype == DType::F8_E4M3);
  const double allowed = bf16_products && bf16_level_tolerance > 0.0 ? bf16_level_tolerance : tolerance;
  CHECK(worst_relative_error(logits, s3test::naive_qwen3_logits(model, tokens, 0, bf16_inputs)) <= allowed);
}

}  // namespace

TEST(qwen3_forward_f32_tiny_matches_naive_reference) {
  check_against_reference(s3test::tiny_qwen3_config(), DType::F32, DType::F32, 37, 1e-4);
}

TEST(qwen3_forward_bf16_tiny_matches_naive_reference_on_the_same_bf16_weights) {
  check_against_reference(s3test::tiny_qwen3_config(), DType::BF16, DType::BF16, 37, 1e-4, 5e-3);
}

TEST(qwen3_forward_f16_tiny_matches_naive_reference) {
  check_against_reference(s3test::tiny_qwen3_config(), DType::F16, DType::F16, 21, 1e-4);
}

TEST(qwen3_forward_fp8_blockwise_tiny_matches_naive_dequantized_reference) {
  check_against_reference(s3test::tiny_qwen3_config(), DType::F8_E4M3, DType::BF16, 21, 1e-4);
}

TEST(qwen3_forward_fp8_blockwise_with_partial_blocks_matches_naive_reference) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  config.hidden_size = 160;  // 2 blocks of 128 columns, the second partial
  config.num_attention_heads = 5;
  config.num_key_value_heads = 1;
  config.head_dim = 32;
  config.intermediate_size = 300;  // 3 blocks, the last one 44 wide
  config.vocab_size = 700;
  check_against_reference(config, DType::F8_E4M3, DType::BF16, 13, 1e-4, 5e-3);
}

TEST(qwen3_forward_bf16_small_matches_naive_reference) {
  check_against_reference(s3test::small_qwen3_config(), DType::BF16, DType::BF16, 19, 1e-4, 5e-3);
}

TEST(qwen3_forward_head_dim_other_than_hidden_over_heads) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  config.head_dim = 32;  // q_proj is 64 → 128, as Qwen3-0.6B's is 1024 → 2048
  check_against_reference(config, DType::F32, DType::F32, 23, 1e-4);
}

TEST(qwen3_forward_untied_head_reads_lm_head) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  config.tie_word_embeddings = false;
  check_against_reference(config, DType::BF16, DType::BF16, 17, 1e-4);
}

TEST(qwen3_forward_tied_model_ignores_a_present_lm_head) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const s3test::TestModel plain = s3test::make_test_model(config, DType::BF16, 7);
  const s3test::TestModel with_head = s3test::make_test_model(config, DType::BF16, 7, DType::BF16, true);
  const std::vector<int32_t> tokens = random_tokens(9, config.vocab_size, 3);
  s3::ThreadPool pool(2);
  CHECK(prefill_logits(weights_of(plain), tokens, pool) == prefill_logits(weights_of(with_head), tokens, pool));
}

TEST(qwen3_forward_is_causal) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::BF16, 5);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(2);
  std::vector<int32_t> tokens = random_tokens(40, 512, 1);
  const std::vector<float> before = prefill_logits(weights, tokens, pool);
  tokens[30] = (tokens[30] + 1) % 512;
  const std::vector<float> after = prefill_logits(weights, tokens, pool);
  const size_t V = 512;
  CHECK(std::equal(before.begin(), before.begin() + 30 * V, after.begin()));
  CHECK(!std::equal(before.begin() + 30 * V, before.end(), after.begin() + 30 * V));
}

TEST(qwen3_forward_incremental_decode_equals_prefill_bit_for_bit) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::BF16, 9);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(2);
  const std::vector<int32_t> tokens = random_tokens(45, 512, 2);
  const std::vector<float> full = prefill_logits(weights, tokens, pool);
  const int64_t V = 512, T = 45, prompt = 20;
  KvCache cache(weights.config(), 16, 3);
  const int32_t table[] = {2, 0, 1};  // out of order on purpose: the table, not the id, orders positions
  Qwen3Workspace workspace;
  std::vector<float> logits(static_cast<size_t>(V));
  const int64_t last = prompt - 1;
  AttentionSequence seq{0, prompt, table, 3};
  s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, &last, 1}, cache, workspace, logits.data(), pool);
  CHECK(std::equal(logits.begin(), logits.end(), full.begin() + last * V));
  for (int64_t t = prompt; t < T; t++) {
    seq = AttentionSequence{t, 1, table, 3};
    const int64_t row = 0;
    s3::model::qwen3_forward(weights, {&tokens[size_t(t)], &seq, 1, &row, 1}, cache, workspace, logits.data(), pool);
    CHECK(std::equal(logits.begin(), logits.end(), full.begin() + t * V));
  }
}

TEST(qwen3_forward_batched_sequences_equal_each_alone_bit_for_bit) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::BF16, 4);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(2);
  const int64_t V = 512;
  const std::vector<size_t> lengths = {1, 17, 5, 33, 2};
  std::vector<std::vector<int32_t>> sequences;
  for (size_t i = 0; i < lengths.size(); i++) sequences.push_back(random_tokens(lengths[i], V, 100 + i));

  // Paged: 16-position blocks handed out interleaved between sequences.
  KvCache cache(weights.config(), 16, 16);
  std::vector<std::vector<int32_t>> tables(lengths.size());
  int32_t next_block = 15;
  for (size_t round = 0; round < 3; round++) {
    for (size_t i = 0; i < lengths.size(); i++) {
      if (round * 16 < lengths[i]) tables[i].push_back(next_block--);
    }
  }
  std::vector<int32_t> packed;
  std::vector<AttentionSequence> batch;
  std::vector<int64_t> rows;
  for (size_t i = 0; i < lengths.size(); i++) {
    batch.push_back({0, int64_t(lengths[i]), tables[i].data(), int64_t(tables[i].size())});
    for (int32_t token : sequences[i]) {
      rows.push_back(int64_t(packed.size()));
      packed.push_back(token);
    }
  }
  Qwen3Workspace workspace;
  std::vector<float> logits(rows.size() * size_t(V));
  s3::model::qwen3_forward(weights, Qwen3Batch{packed.data(), batch.data(), int64_t(batch.size()), rows.data(),
                                               int64_t(rows.size())},
                           cache, workspace, logits.data(), pool);
  size_t offset = 0;
  for (size_t i = 0; i < lengths.size(); i++) {
    const std::vector<float> alone = prefill_logits(weights, sequences[i], pool);
    CHECK(std::equal(alone.begin(), alone.end(), logits.begin() + long(offset * size_t(V))));
    offset += lengths[i];
  }
}

TEST(qwen3_forward_mixed_prefill_and_decode_batch_equals_separate_calls) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::F32, 8, DType::F32);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(2);
  const std::vector<int32_t> a = random_tokens(30, 512, 1), b = random_tokens(12, 512, 2);
  const std::vector<float> a_full = prefill_logits(weights, a, pool), b_full = prefill_logits(weights, b, pool);
  // Sequence a decodes its last token while b prefills in chunks of 7 and 5, in the same calls.
  KvCache cache(weights.config(), 32, 2);
  const int32_t table_a[] = {0}, table_b[] = {1};
  Qwen3Workspace workspace;
  AttentionSequence first{0, 29, table_a, 1};
  s3::model::qwen3_forward(weights, Qwen3Batch{a.data(), &first, 1, nullptr, 0}, cache, workspace, nullptr, pool);
  std::vector<int32_t> packed = {a[29]};
  packed.insert(packed.end(), b.begin(), b.begin() + 7);
  const AttentionSequence mixed[] = {{29, 1, table_a, 1}, {0, 7, table_b, 1}};
  const int64_t rows[] = {0, 7};
  std::vector<float> logits(2 * 512);
  s3::model::qwen3_forward(weights, {packed.data(), mixed, 2, rows, 2}, cache, workspace, logits.data(), pool);
  CHECK(std::equal(logits.begin(), logits.begin() + 512, a_full.begin() + 29 * 512));
  CHECK(std::equal(logits.begin() + 512, logits.end(), b_full.begin() + 6 * 512));
  const AttentionSequence rest{7, 5, table_b, 1};
  const int64_t last = 4;
  s3::model::qwen3_forward(weights, {b.data() + 7, &rest, 1, &last, 1}, cache, workspace, logits.data(), pool);
  CHECK(std::equal(logits.begin(), logits.begin() + 512, b_full.begin() + 11 * 512));
}

TEST(qwen3_forward_does_not_depend_on_thread_count) {
  const s3test::TestModel model = s3test::make_test_model(s3test::small_qwen3_config(), DType::BF16, 6);
  const Qwen3Weights weights = weights_of(model);
  const std::vector<int32_t> tokens = random_tokens(29, 4096, 5);
  s3::ThreadPool one(1), three(3);
  CHECK(prefill_logits(weights, tokens, one) == prefill_logits(weights, tokens, three));
}

TEST(qwen3_forward_refuses_bad_batches_before_writing) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::BF16, 1);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(1);
  KvCache cache(weights.config(), 16, 2);
  Qwen3Workspace workspace;
  std::vector<int32_t> tokens = random_tokens(20, 512, 1);
  auto run = [&](const AttentionSequence& seq, const int64_t* row) {
    s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, row, row ? 1 : 0}, cache, workspace, nullptr, pool);
  };
  const int32_t table[] = {0, 1}, bad_table[] = {0, 2};
  const AttentionSequence too_long{0, 20, table, 1};  // 20 positions need 2 blocks
  CHECK_THROWS(std::invalid_argument, run(too_long, nullptr));
  CHECK_THROWS(std::invalid_argument, run(AttentionSequence{0, 20, bad_table, 2}, nullptr));
  CHECK_THROWS(std::invalid_argument, run(AttentionSequence{4090, 10, table, 2}, nullptr));  // past 4096 positions
  const int64_t past_end = 20;
  CHECK_THROWS(std::invalid_argument, run(AttentionSequence{0, 20, table, 2}, &past_end));
  tokens[3] = 512;
  CHECK_THROWS(std::invalid_argument, run(AttentionSequence{0, 20, table, 2}, nullptr));
  tokens[3] = 0;
  try {
    run(too_long, nullptr);
  } catch (const std::invalid_argument& error) {
    CHECK(std::string(error.what()).find("sequence 0 has 1 blocks in its block table; positions up to 19 need 2") !=
          std::string::npos);
  }
}

TEST(qwen3_forward_rope_offset_matches_reference_with_shifted_positions) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const s3test::TestModel model = s3test::make_test_model(config, DType::F32, 7, DType::F32);
  const Qwen3Weights weights = weights_of(model);
  const std::vector<int32_t> tokens = random_tokens(19, config.vocab_size, 5);
  s3::ThreadPool pool(2);
  const std::vector<float> shifted = prefill_logits(weights, tokens, pool, 1000);
  CHECK(worst_relative_error(shifted, s3test::naive_qwen3_logits(model, tokens, 1000)) <= 1e-4);
  // Rotary attention depends on position differences only: a uniform shift changes rounding, not the result.
  CHECK(worst_relative_error(shifted, s3test::naive_qwen3_logits(model, tokens, 0)) <= 1e-3);
  const std::vector<float> unshifted = prefill_logits(weights, tokens, pool, 0);
  CHECK(unshifted != shifted);
}

TEST(kv_cache_bf16_stores_rounded_values_in_the_f32_layout) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  KvCache f32(config, 16, 3), bf16(config, 16, 3, s3::cpu::KvDtype::Bf16);
  CHECK_EQ(KvCache::bytes_per_block(config, 16, s3::cpu::KvDtype::F32),
           2 * KvCache::bytes_per_block(config, 16, s3::cpu::KvDtype::Bf16));
  CHECK_EQ(KvCache::bytes_per_block(config, 16, s3::cpu::KvDtype::F32), 2 * 2 * 16 * 16 * 2 * 4);  // L·NKV·bs·HD·(K,V)·4
  const int64_t NKV = config.num_key_value_heads, HD = config.head_dim, T = 40;
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(size_t(T * NKV * HD)), v(k.size());
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  k[5] = 1.00390625f;  // 1 + 2^-8: a tie that rounds to even (1.0)
  const int32_t table[] = {2, 0, 1};
  const AttentionSequence seq{0, T, table, 3};
  for (KvCache* cache : {&f32, &bf16}) cache->store(1, &seq, 1, k.data(), v.data());
  const s3::cpu::KvPages a = f32.pages(1), b = bf16.pages(1);
  CHECK(b.dtype == s3::cpu::KvDtype::Bf16 && a.dtype == s3::cpu::KvDtype::F32);
  const size_t elements = size_t(3 * NKV * 16 * HD);
  const auto* fk = static_cast<const float*>(a.keys);
  const auto* fv = static_cast<const float*>(a.values);
  const auto* bk = static_cast<const uint16_t*>(b.keys);
  const auto* bv = static_cast<const uint16_t*>(b.values);
  int64_t mismatches = 0;
  for (size_t i = 0; i < elements; i++) {
    mismatches += bk[i] != s3::f32_to_bf16(fk[i]) || bv[i] != s3::f32_to_bf16(fv[i]);
  }
  CHECK_EQ(mismatches, int64_t(0));
  // Position 0, head 0 lives at the start of block table[0] = 2.
  CHECK_EQ(bk[size_t(2 * NKV * 16 * HD + 5)], uint16_t(0x3F80));
  CHECK(static_cast<const uint16_t*>(bf16.pages(0).keys)[0] == 0);  // layer 0 untouched
}

TEST(kv_cache_fp8_stores_quantized_rows_and_their_scales_in_the_f32_layout) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  KvCache f32(config, 16, 3), fp8(config, 16, 3, s3::cpu::KvDtype::Fp8E4M3);
  // L·NKV·bs·(HD bytes + a 4-byte scale)·(K,V).
  CHECK_EQ(KvCache::bytes_per_block(config, 16, s3::cpu::KvDtype::Fp8E4M3), int64_t(2 * 2 * 16 * (16 + 4) * 2));
  const int64_t NKV = config.num_key_value_heads, HD = config.head_dim, T = 40;
  std::mt19937_64 rng(4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(size_t(T * NKV * HD)), v(k.size());
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  const int32_t table[] = {2, 0, 1};
  const AttentionSequence seq{0, T, table, 3};
  for (KvCache* cache : {&f32, &fp8}) cache->store(1, &seq, 1, k.data(), v.data());
  const s3::cpu::KvPages a = f32.pages(1), b = fp8.pages(1);
  CHECK(b.dtype == s3::cpu::KvDtype::Fp8E4M3 && b.key_scales != nullptr && b.value_scales != nullptr);
  CHECK(a.key_scales == nullptr);
  const auto* fk = static_cast<const float*>(a.keys);
  const auto* fv = static_cast<const float*>(a.values);
  const auto* bk = static_cast<const uint8_t*>(b.keys);
  const auto* bv = static_cast<const uint8_t*>(b.values);
  int64_t mismatches = 0;
  std::vector<uint8_t> row_bytes(static_cast<size_t>(HD));
  // Every row (unwritten ones are zeros: scale 1, bytes 0) holds the quantization of its f32 row.
  for (int64_t row = 0; row < 3 * NKV * 16; row++) {
    const size_t at = size_t(row * HD);
    const float key_scale = s3::cpu::quantize_fp8_row(fk + at, HD, row_bytes.data());
    mismatches += key_scale != b.key_scales[row] || !std::equal(row_bytes.begin(), row_bytes.end(), bk + at);
    const float value_scale = s3::cpu::quantize_fp8_row(fv + at, HD, row_bytes.data());
    mismatches += value_scale != b.value_scales[row] || !std::equal(row_bytes.begin(), row_bytes.end(), bv + at);
  }
  CHECK_EQ(mismatches, int64_t(0));
  // Position 0, head 0 lives at the start of block table[0] = 2: row 2·NKV·16.
  const int64_t first = 2 * NKV * 16;
  CHECK_EQ(b.key_scales[first], s3::cpu::quantize_fp8_row(k.data(), HD, row_bytes.data()));
  CHECK(std::equal(row_bytes.begin(), row_bytes.end(), bk + first * HD));
  CHECK(fp8.pages(0).key_scales[0] == 1.0f && static_cast<const uint8_t*>(fp8.pages(0).keys)[0] == 0);  // layer 0 untouched
}

namespace {

// A small model's logits on a `dtype` cache: a prefill near the f32 cache's (worst |difference| at
// most tolerance × the largest |logit|, and not zero), and a paged cache fed the prompt and then
// one token at a time giving the prefill's logits bit for bit. Returns the worst relative difference.
double check_cache_dtype_near_f32_and_decode_equal_to_prefill(s3::cpu::KvDtype dtype, double tolerance) {
  const s3test::TestModel model = s3test::make_test_model(s3test::small_qwen3_config(), DType::BF16, 5);
  const Qwen3Weights weights = weights_of(model);
  s3::ThreadPool pool(2);
  const int64_t V = weights.config().vocab_size, T = 37, prompt = 21;
  const std::vector<int32_t> tokens = random_tokens(size_t(T), V, 8);
  const std::vector<float> f32 = prefill_logits(weights, tokens, pool, 0, s3::cpu::KvDtype::F32);
  const std::vector<float> reduced = prefill_logits(weights, tokens, pool, 0, dtype);
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < f32.size(); i++) {
    worst = s3test::max_or_nan(worst, double(std::fabs(reduced[i] - f32[i])));
    scale = std::max(scale, double(std::fabs(f32[i])));
  }
  CHECK(worst > 0.0);
  CHECK(worst <= tolerance * scale);
  KvCache cache(weights.config(), 16, 3, dtype);
  const int32_t table[] = {1, 2, 0};
  Qwen3Workspace workspace;
  std::vector<float> logits(static_cast<size_t>(V));
  const int64_t last = prompt - 1;
  AttentionSequence seq{0, prompt, table, 3};
  s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, &last, 1}, cache, workspace, logits.data(), pool);
  CHECK(std::equal(logits.begin(), logits.end(), reduced.begin() + last * V));
  for (int64_t t = prompt; t < T; t++) {
    seq = AttentionSequence{t, 1, table, 3};
    const int64_t row = 0;
    s3::model::qwen3_forward(weights, {&tokens[size_t(t)], &seq, 1, &row, 1}, cache, workspace, logits.data(), pool);
    CHECK(std::equal(logits.begin(), logits.end(), reduced.begin() + t * V));
  }
  return worst / scale;
}

}  // namespace

TEST(qwen3_forward_bf16_cache_is_near_f32_and_decode_equals_prefill_bit_for_bit) {
  check_cache_dtype_near_f32_and_decode_equal_to_prefill(s3::cpu::KvDtype::Bf16, 2e-2);
}

TEST(qwen3_forward_fp8_cache_is_near_f32_and_decode_equals_prefill_bit_for_bit) {
  // e4m3 keeps 4 significant bits to bf16's 8: measured 0.0097 of the largest |logit| (bf16: 0.00084).
  check_cache_dtype_near_f32_and_decode_equal_to_prefill(s3::cpu::KvDtype::Fp8E4M3, 5e-2);
}
