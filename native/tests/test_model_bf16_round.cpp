// test_model_bf16_round.cpp: `--weights bf16`. Rounding an f32 model gives byte for byte the model a
// BF16 checkpoint of the same values holds (naive_qwen3.h writes those independently), so the forward
// pass gives the same bits; FP8 weights and their block scales are kept as stored; the engine's
// format switch picks it.
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/model_runner.h"
#include "model/bf16_round.h"
#include "model/kv_cache.h"
#include "model/qwen3_forward.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

using s3::DType;
using s3::model::Qwen3Config;
using s3::model::Qwen3Weights;

namespace {

std::vector<float> bf16_forward_logits(const Qwen3Weights& weights, const std::vector<int32_t>& tokens) {
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

}  // namespace

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
  const std::vector<float> a = bf16_forward_logits(rounded, tokens), b = bf16_forward_logits(stored, tokens);
  CHECK_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The f32 model itself gives other logits: the rounding is real.
  const std::vector<float> unrounded = bf16_forward_logits(from_f32, tokens);
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
