// test_model_weight_formats.cpp: `--weights fp8` and `--weights bf16`. FP8: block quantization's
// error bound and its all-zero and partial blocks; quantizing an f32 model gives byte for byte the
// model an FP8 checkpoint of the same values holds (naive_qwen3.h writes those independently), so the
// forward pass gives the same bits; embeddings, LM head and norms are kept as stored. BF16: rounding an
// f32 model gives byte for byte the BF16 checkpoint of the same values (the same logits, and other
// ones than the f32 model's); FP8 weights and their scales are kept; the engine's format switch picks
// each.
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "engine/model_runner.h"
#include "model/bf16_round.h"
#include "model/fp8_quantize.h"
#include "model/kv_cache.h"
#include "model/qwen3_forward.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

using s3::DType;
using s3::model::Qwen3Config;
using s3::model::Qwen3Weights;

namespace {

std::vector<float> forward_logits(const Qwen3Weights& weights, const std::vector<int32_t>& tokens) {
  const Qwen3Config& c = weights.config();
  const int64_t T = int64_t(tokens.size());
  s3::model::KvCache cache(c, 32, 1);
  const int32_t table[] = {0};
  const s3::cpu::AttentionSequence seq{0, T, table, 1};
  std::vector<int64_t> rows(static_cast<size_t>(T));
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> logits(size_t(T * c.vocab_size));
  s3::model::Qwen3Workspace workspace;
  s3::ThreadPool pool(2);
  s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, rows.data(), T}, cache, workspace, logits.data(), pool);
  return logits;
}

Qwen3Config partial_block_config() {
  Qwen3Config c = s3test::tiny_qwen3_config();
  c.hidden_size = 160;  // 2 blocks of 128 columns, the second partial
  c.num_attention_heads = 5;
  c.num_key_value_heads = 1;
  c.head_dim = 32;
  c.intermediate_size = 300;
  c.vocab_size = 700;
  return c;
}

}  // namespace

TEST(fp8_blockwise_quantization_is_within_half_an_e4m3_step_and_hits_448) {
  const int64_t rows = 200, cols = 300;  // partial blocks both ways
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(size_t(rows * cols));
  for (float& x : w) x = normal(rng);
  for (int64_t r = 128; r < rows; r++) {
    for (int64_t c = 0; c < 128; c++) w[size_t(r * cols + c)] = 0.0f;  // one all-zero block
  }
  std::vector<uint8_t> bytes(w.size());
  std::vector<float> scales(2 * 3);
  s3::model::quantize_fp8_blockwise(w.data(), rows, cols, bytes.data(), scales.data());
  CHECK_EQ(scales[3], 1.0f);  // block (1, 0) is all zero
  for (int64_t rb = 0; rb < 2; rb++) {
    for (int64_t cb = 0; cb < 3; cb++) {
      bool hits_max = false;
      const float scale = scales[size_t(rb * 3 + cb)];
      for (int64_t r = rb * 128; r < std::min<int64_t>(rows, rb * 128 + 128); r++) {
        for (int64_t c = cb * 128; c < std::min<int64_t>(cols, cb * 128 + 128); c++) {
          const float x = w[size_t(r * cols + c)], q = s3::fp8e4m3_to_f32(bytes[size_t(r * cols + c)]);
          hits_max |= std::fabs(q) == s3::kFp8E4M3Max;
          // e4m3 keeps 3 mantissa bits: relative error ≤ 2^-4 for normals, ≤ 2^-10 absolute below.
          CHECK(std::fabs(q * scale - x) <= std::fabs(x) / 16.0f + scale * 0.001953125f);
        }
      }
      if (!(rb == 1 && cb == 0)) CHECK(hits_max);
    }
  }
}

TEST(fp8_quantized_f32_model_equals_the_fp8_checkpoint_of_the_same_values) {
  const Qwen3Config config = partial_block_config();
  const s3test::TestModel f32 = s3test::make_test_model(config, DType::F32, 31, DType::F32);
  const s3test::TestModel fp8 = s3test::make_test_model(config, DType::F8_E4M3, 31, DType::F32);
  const Qwen3Weights from_f32 = Qwen3Weights::from_tensors(config, f32.named(), Qwen3Weights::Storage::Borrow);
  const Qwen3Weights quantized = s3::model::quantize_weights_fp8(from_f32);
  const Qwen3Weights stored = Qwen3Weights::from_tensors(config, fp8.named(), Qwen3Weights::Storage::Borrow);
  CHECK(quantized.config().fp8_blockwise);
  const s3::cpu::MatrixView& q = quantized.layers()[1].gate_proj;
  const s3::cpu::MatrixView& s = stored.layers()[1].gate_proj;
  CHECK(q.dtype == DType::F8_E4M3);
  CHECK_EQ(std::memcmp(q.data, s.data, size_t(q.rows * q.cols)), 0);
  CHECK_EQ(std::memcmp(q.block_scales, s.block_scales, size_t(3 * 2) * sizeof(float)), 0);
  CHECK(quantized.embed_tokens().dtype == DType::F32);  // kept as stored
  const std::vector<int32_t> tokens = {5, 99, 3, 640, 17, 2, 2, 311, 0, 699};
  const std::vector<float> a = forward_logits(quantized, tokens), b = forward_logits(stored, tokens);
  CHECK_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(fp8_quantization_keeps_fp8_weights_and_bf16_embeddings_as_they_are) {
  const Qwen3Config config = partial_block_config();
  const s3test::TestModel fp8 = s3test::make_test_model(config, DType::F8_E4M3, 8, DType::BF16);
  const Qwen3Weights stored = Qwen3Weights::from_tensors(config, fp8.named(), Qwen3Weights::Storage::Borrow);
  const Qwen3Weights again = s3::model::quantize_weights_fp8(stored);
  CHECK(again.embed_tokens().dtype == DType::BF16);
  CHECK_EQ(std::memcmp(again.layers()[0].down_proj.data, stored.layers()[0].down_proj.data, size_t(160 * 300)), 0);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5};
  const std::vector<float> a = forward_logits(again, tokens), b = forward_logits(stored, tokens);
  CHECK_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(bf16_rounded_f32_model_equals_the_bf16_checkpoint_of_the_same_values) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  config.tie_word_embeddings = false;
  const s3test::TestModel f32 = s3test::make_test_model(config, DType::F32, 17, DType::F32);
  const s3test::TestModel bf16 = s3test::make_test_model(config, DType::BF16, 17, DType::BF16);
  const Qwen3Weights from_f32 = Qwen3Weights::from_tensors(config, f32.named(), Qwen3Weights::Storage::Borrow);
  const Qwen3Weights rounded = s3::model::round_weights_bf16(from_f32);
  const Qwen3Weights stored = Qwen3Weights::from_tensors(config, bf16.named(), Qwen3Weights::Storage::Borrow);
  CHECK(!rounded.config().fp8_blockwise);
  CHECK(rounded.embed_tokens().dtype == DType::BF16);
  CHECK(rounded.lm_head().dtype == DType::BF16);
  const s3::cpu::MatrixView& r = rounded.layers()[0].up_proj;
  const s3::cpu::MatrixView& s = stored.layers()[0].up_proj;
  CHECK(r.dtype == DType::BF16);
  CHECK_EQ(std::memcmp(r.data, s.data, size_t(r.rows * r.cols) * 2), 0);
  CHECK_EQ(std::memcmp(rounded.layers()[1].q_norm, stored.layers()[1].q_norm, size_t(config.head_dim) * sizeof(float)), 0);
  CHECK_EQ(std::memcmp(rounded.norm(), stored.norm(), size_t(config.hidden_size) * sizeof(float)), 0);
  const std::vector<int32_t> tokens = {5, 9, 3, 60, 17, 2, 2, 31, 0};
  const std::vector<float> a = forward_logits(rounded, tokens), b = forward_logits(stored, tokens);
  CHECK_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The f32 model itself gives other logits: the rounding is real.
  const std::vector<float> unrounded = forward_logits(from_f32, tokens);
  CHECK(std::memcmp(a.data(), unrounded.data(), a.size() * sizeof(float)) != 0);
}

TEST(bf16_rounding_keeps_fp8_weights_and_their_scales) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  const s3test::TestModel fp8 = s3test::make_test_model(config, DType::F8_E4M3, 4, DType::F32);
  const Qwen3Weights stored = Qwen3Weights::from_tensors(config, fp8.named(), Qwen3Weights::Storage::Borrow);
  const Qwen3Weights rounded = s3::model::round_weights_bf16(stored);
  const s3::cpu::MatrixView& w = rounded.layers()[0].down_proj;
  CHECK(w.dtype == DType::F8_E4M3);
  CHECK_EQ(std::memcmp(w.data, stored.layers()[0].down_proj.data, size_t(w.rows * w.cols)), 0);
  CHECK_EQ(std::memcmp(w.block_scales, stored.layers()[0].down_proj.block_scales, size_t(w.scale_cols()) * sizeof(float)), 0);
  CHECK(rounded.embed_tokens().dtype == DType::BF16);  // the f32 embedding is rounded
}

TEST(weight_format_bf16_selects_the_rounded_weights) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const s3test::TestModel f32 = s3test::make_test_model(config, DType::F32, 2, DType::F32);
  auto weights = std::make_shared<const Qwen3Weights>(Qwen3Weights::from_tensors(config, f32.named(), Qwen3Weights::Storage::Copy));
  CHECK(s3::engine::weights_in_format(weights, s3::engine::WeightFormat::Stored) == weights);
  const auto rounded = s3::engine::weights_in_format(weights, s3::engine::WeightFormat::Bf16);
  CHECK(rounded->layers()[0].gate_proj.dtype == DType::BF16);
  const auto quantized = s3::engine::weights_in_format(weights, s3::engine::WeightFormat::Fp8);
  CHECK(quantized->layers()[0].gate_proj.dtype == DType::F8_E4M3);
}
