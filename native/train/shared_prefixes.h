// shared_prefixes: finds the token prefixes that sequences of a training micro-batch share and lays
// the batch out so each shared prefix is computed once. The agents of one team size see the same
// system turn (hundreds of tokens: the task statement, the harness rules and the tools block), and
// without sharing every agent's copy goes through every layer forward and backward again. A prefix
// becomes a sequence of its own and its sharers continue it (model/qwen3_train.h seq_parent):
// the same attention, positions and loss, a different summation order of the prefix's gradients.
// Only prompt tokens are shared: a prefix never reaches a row whose prediction carries a loss
// weight, so every loss row keeps exactly one copy.
#pragma once

#include <cstdint>
#include <vector>

namespace s3::train {

// The layout: internal row r holds original row source[r]; prefix rows take the row of their
// group's first sequence. parent[s] is the internal sequence s continues (−1 for none).
struct SharedPrefixLayout {
  std::vector<int32_t> tokens;
  std::vector<int64_t> begins;  // [n_seq + 1]
  std::vector<int64_t> parent;  // [n_seq]
  std::vector<int64_t> source;  // [T'] original row of each internal row
  std::vector<bool> prefix_row;  // [T'] whether the row belongs to a shared prefix (no loss there)
  int64_t shared_rows = 0;       // original rows no longer computed: Σ over groups (members − 1) · prefix length
};

// tokens [T] with sequences [begins[s], begins[s+1]); first_weighted[s] is the index within
// sequence s of its first row with a loss weight (its length when none). Sequences join a group
// when they share at least min_prefix tokens with its first sequence and do not shorten the group's
// prefix by more than an eighth; a group of one is left as it is.
SharedPrefixLayout share_prefixes(const std::vector<int32_t>& tokens, const std::vector<int64_t>& begins,
                                  const std::vector<int64_t>& first_weighted, int64_t min_prefix);

}  // namespace s3::train
