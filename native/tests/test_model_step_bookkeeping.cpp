// test_model_step_bookkeeping.cpp: the per-token bookkeeping the device forward pass uploads
// (model/qwen3_step_bookkeeping.h), checked entry by entry on a mixed batch against the cache layout
// (core/ops/kv_layout.h); which batches are decode steps CUDA graphs may replay; the row counts they
// are captured at; and the padding of a decode step (padding rows write nothing, read a real block).
#include <stdexcept>
#include <vector>

#include "core/ops/kv_layout.h"
#include "model/qwen3_step_bookkeeping.h"
#include "tests/test_framework.h"

using s3::model::Qwen3Batch;

namespace {

constexpr int64_t kBlockSize = 4, kBlocks = 20, kKvHeads = 2;

}  // namespace

TEST(step_bookkeeping_places_every_token_of_a_mixed_batch) {
  // Sequence 0 prefills 3 tokens after 5 cached ones (positions 5..7, rope offset 10); sequence 1
  // decodes position 9; only the last token of each gets logits.
  const std::vector<int32_t> table0 = {7, 3}, table1 = {11, 2, 19};
  const std::vector<s3::cpu::AttentionSequence> sequences = {{5, 3, table0.data(), 2}, {9, 1, table1.data(), 3}};
  const std::vector<int32_t> tokens = {40, 41, 42, 50};
  const std::vector<int64_t> logit_rows = {2, 3}, rope_offsets = {10, 0};
  const Qwen3Batch batch{tokens.data(), sequences.data(), 2, logit_rows.data(), 2, rope_offsets.data()};
  const s3::model::Qwen3StepBookkeeping s = s3::model::qwen3_step_bookkeeping(batch, 4, kKvHeads, kBlockSize, kBlocks);
  CHECK(s.tokens == tokens);
  CHECK(s.positions == (std::vector<int32_t>{5, 6, 7, 9}));
  CHECK(s.rope_positions == (std::vector<int32_t>{15, 16, 17, 9}));
  CHECK(s.table_offsets == (std::vector<int32_t>{0, 0, 0, 2}));
  CHECK(s.tables == (std::vector<int32_t>{7, 3, 11, 2, 19}));  // the blocks each sequence's positions use
  CHECK(s.logit_rows == (std::vector<int32_t>{2, 3}));
  // Position 5 sits in block table0[1] = 3 at offset 1; position 9 in table1[2] = 19 at offset 1.
  CHECK_EQ(s.kv_rows[0], s3::ops::kv_row(0, 3, 0, 1, kBlocks, kKvHeads, kBlockSize));
  CHECK_EQ(s.kv_rows[2], s3::ops::kv_row(0, 3, 0, 3, kBlocks, kKvHeads, kBlockSize));
  CHECK_EQ(s.kv_rows[3], s3::ops::kv_row(0, 19, 0, 1, kBlocks, kKvHeads, kBlockSize));
}

TEST(step_bookkeeping_knows_decode_steps) {
  const std::vector<int32_t> table = {1, 2, 3};
  const std::vector<s3::cpu::AttentionSequence> decode = {{4, 1, table.data(), 3}, {8, 1, table.data(), 3}};
  const std::vector<int32_t> tokens = {1, 2};
  const std::vector<int64_t> in_order = {0, 1}, swapped = {1, 0}, one = {1}, offsets = {0, 0};
  CHECK(s3::model::is_decode_step({tokens.data(), decode.data(), 2, in_order.data(), 2}));
  CHECK(!s3::model::is_decode_step({tokens.data(), decode.data(), 2, swapped.data(), 2}));    // rows out of order
  CHECK(!s3::model::is_decode_step({tokens.data(), decode.data(), 2, one.data(), 1}));        // a row without logits
  CHECK(!s3::model::is_decode_step({tokens.data(), decode.data(), 2, in_order.data(), 2, offsets.data()}));  // rotary offsets
  CHECK(!s3::model::is_decode_step({tokens.data(), decode.data(), 0, in_order.data(), 0}));   // empty
  const std::vector<s3::cpu::AttentionSequence> prefill = {{4, 1, table.data(), 3}, {0, 2, table.data(), 3}};
  const std::vector<int64_t> last = {0, 2};
  CHECK(!s3::model::is_decode_step({tokens.data(), prefill.data(), 2, last.data(), 2}));
}

TEST(decode_graph_row_counts_grow_by_eight_past_eight) {
  CHECK(s3::model::decode_graph_row_counts(1) == (std::vector<int64_t>{1}));
  CHECK(s3::model::decode_graph_row_counts(6) == (std::vector<int64_t>{1, 2, 4, 6}));
  CHECK(s3::model::decode_graph_row_counts(30) == (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 30}));
  CHECK_EQ(s3::model::decode_graph_row_counts(256).size(), size_t(3 + 32));
  CHECK_EQ(s3::model::decode_graph_rows(3, 256), int64_t(4));
  CHECK_EQ(s3::model::decode_graph_rows(9, 256), int64_t(16));
  CHECK_EQ(s3::model::decode_graph_rows(256, 256), int64_t(256));
  CHECK_EQ(s3::model::decode_graph_rows(27, 30), int64_t(30));
  CHECK_EQ(s3::model::decode_graph_rows(257, 256), int64_t(0));
  CHECK_EQ(s3::model::decode_graph_rows(0, 256), int64_t(0));
}

TEST(padding_a_decode_step_adds_rows_that_write_nothing) {
  const std::vector<int32_t> table0 = {6, 9}, table1 = {4};
  const std::vector<s3::cpu::AttentionSequence> sequences = {{5, 1, table0.data(), 2}, {2, 1, table1.data(), 1}};
  const std::vector<int32_t> tokens = {30, 31};
  const std::vector<int64_t> rows = {0, 1};
  s3::model::Qwen3StepBookkeeping s =
      s3::model::qwen3_step_bookkeeping({tokens.data(), sequences.data(), 2, rows.data(), 2}, 2, kKvHeads, kBlockSize, kBlocks);
  const std::vector<int64_t> real_kv_rows = s.kv_rows;
  s3::model::pad_decode_step(s, 4);
  CHECK(s.tokens == (std::vector<int32_t>{30, 31, 0, 0}));
  CHECK(s.positions == (std::vector<int32_t>{5, 2, 0, 0}));
  CHECK(s.rope_positions == (std::vector<int32_t>{5, 2, 0, 0}));
  CHECK(s.table_offsets == (std::vector<int32_t>{0, 2, 0, 0}));
  CHECK(s.tables == (std::vector<int32_t>{6, 9, 4}));  // padding reads entry 0, a real block
  CHECK(s.logit_rows == (std::vector<int32_t>{0, 1, 2, 3}));
  CHECK(s.kv_rows == (std::vector<int64_t>{real_kv_rows[0], real_kv_rows[1], -1, -1}));
  CHECK_THROWS(std::invalid_argument, s3::model::pad_decode_step(s, 3));
  s3::model::Qwen3StepBookkeeping empty;
  CHECK_THROWS(std::invalid_argument, s3::model::pad_decode_step(empty, 1));
}
