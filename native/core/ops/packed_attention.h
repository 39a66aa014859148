// ops/packed_attention.h: which keys a query of the training attention sees, shared by
// cpu/attention_backward and cuda/attention_backward. Tokens [T] hold sequences back to back
// (seq_begins[0..n_seq], seq_begins[0] = 0, seq_begins[n_seq] = T); a query at row t of sequence s
// sees, in this key order, all rows of s's parent (seq_parent[s] ≥ 0: a prefix shared by its
// children), then s's own rows up to and including t.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

// The sequence holding row t (binary search over seq_begins).
S3_HOST_DEVICE inline int64_t packed_sequence_of(const int64_t* seq_begins, int64_t n_seq, int64_t t) {
  int64_t lo = 0, hi = n_seq - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (seq_begins[mid] <= t) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// The parent of sequence s, or −1 (also when there are no parents at all: seq_parent null).
S3_HOST_DEVICE inline int64_t packed_parent(const int64_t* seq_parent, int64_t s) {
  return seq_parent == nullptr ? -1 : seq_parent[s];
}

// The keys of one query: `parent_count` rows from parent_begin, then rows own_begin .. t.
struct VisibleKeys {
  int64_t parent_begin = 0, parent_count = 0, own_begin = 0, count = 0;
};

S3_HOST_DEVICE inline VisibleKeys visible_keys(const int64_t* seq_begins, const int64_t* seq_parent, int64_t s, int64_t t) {
  VisibleKeys keys;
  const int64_t parent = packed_parent(seq_parent, s);
  if (parent >= 0) {
    keys.parent_begin = seq_begins[parent];
    keys.parent_count = seq_begins[parent + 1] - seq_begins[parent];
  }
  keys.own_begin = seq_begins[s];
  keys.count = keys.parent_count + (t + 1 - keys.own_begin);
  return keys;
}

// The row of the j-th visible key (0 ≤ j < keys.count).
S3_HOST_DEVICE inline int64_t visible_key_row(const VisibleKeys& keys, int64_t j) {
  return j < keys.parent_count ? keys.parent_begin + j : keys.own_begin + (j - keys.parent_count);
}

}  // namespace s3::ops
