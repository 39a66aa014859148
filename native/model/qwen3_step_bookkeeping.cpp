// The device forward pass's per-token bookkeeping; see qwen3_step_bookkeeping.h.
#include "model/qwen3_step_bookkeeping.h"

#include <stdexcept>
#include <string>

#include "core/ops/kv_layout.h"

namespace s3::model {

Qwen3StepBookkeeping qwen3_step_bookkeeping(const Qwen3Batch& batch, int64_t T, int64_t kv_heads, int64_t block_size,
                                            int64_t num_blocks) {
  Qwen3StepBookkeeping s;
  s.tokens.assign(batch.tokens, batch.tokens + T);
  s.rope_positions.resize(size_t(T));
  s.positions.resize(size_t(T));
  s.table_offsets.resize(size_t(T));
  s.kv_rows.resize(size_t(T));
  int64_t t = 0;
  for (int64_t b = 0; b < batch.num_sequences; b++) {
    const cpu::AttentionSequence& seq = batch.sequences[b];
    const int64_t offset = batch.rope_offsets != nullptr ? batch.rope_offsets[b] : 0;
    const int64_t blocks = (seq.start + seq.length + block_size - 1) / block_size;
    const int32_t table_offset = int32_t(s.tables.size());
    s.tables.insert(s.tables.end(), seq.block_table, seq.block_table + blocks);
    for (int64_t i = 0; i < seq.length; i++, t++) {
      const int64_t p = seq.start + i;
      s.positions[size_t(t)] = int32_t(p);
      s.rope_positions[size_t(t)] = int32_t(offset + p);
      s.table_offsets[size_t(t)] = table_offset;
      s.kv_rows[size_t(t)] = ops::kv_row(0, ops::kv_block_of(seq.block_table, p, block_size), 0, p % block_size, num_blocks,
                                         kv_heads, block_size);
    }
  }
  s.logit_rows.assign(batch.logit_rows, batch.logit_rows + batch.num_logit_rows);
  return s;
}

bool is_decode_step(const Qwen3Batch& batch) {
  if (batch.num_sequences < 1 || batch.num_logit_rows != batch.num_sequences || batch.rope_offsets != nullptr) return false;
  for (int64_t b = 0; b < batch.num_sequences; b++) {
    if (batch.sequences[b].length != 1 || batch.logit_rows[b] != b) return false;
  }
  return true;
}

std::vector<int64_t> decode_graph_row_counts(int64_t max_rows) {
  std::vector<int64_t> counts;
  for (int64_t rows = 1; rows < max_rows; rows = rows < 8 ? rows * 2 : rows + 8) counts.push_back(rows);
  if (max_rows >= 1) counts.push_back(max_rows);
  return counts;
}

int64_t decode_graph_rows(int64_t rows, int64_t max_rows) {
  if (rows < 1 || rows > max_rows) return 0;
  for (int64_t count : decode_graph_row_counts(max_rows)) {
    if (count >= rows) return count;
  }
  return 0;
}

void pad_decode_step(Qwen3StepBookkeeping& step, int64_t rows) {
  const int64_t T = int64_t(step.tokens.size());
  if (T > rows) {
    throw std::invalid_argument("pad_decode_step: a step of " + std::to_string(T) + " tokens does not fit " + std::to_string(rows) + " rows");
  }
  if (step.tables.empty()) throw std::invalid_argument("pad_decode_step: the step has no block table entry for padding rows to read");
  step.tokens.resize(size_t(rows), 0);
  step.rope_positions.resize(size_t(rows), 0);
  step.positions.resize(size_t(rows), 0);
  step.table_offsets.resize(size_t(rows), 0);
  step.kv_rows.resize(size_t(rows), -1);
  step.logit_rows.resize(size_t(rows));
  for (int64_t i = 0; i < rows; i++) step.logit_rows[size_t(i)] = int32_t(i);
}

}  // namespace s3::model
