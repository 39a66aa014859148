// attention_backward: causal grouped-query attention over packed sequences for training, f32.
// Tokens [T] hold several sequences back to back; seq_begins[0..n_seq] (seq_begins[0] = 0,
// seq_begins[n_seq] = T) mark them, and a token attends only to itself and earlier tokens of its
// own sequence. Layouts: q, out [T × NH × HD]; k, v [T × NKV × HD]; lse [T × NH] (the log of each
// softmax denominator, in units of the scaled scores). Flash-style: no T × T matrix is ever
// stored; queries go in blocks of `block` rows (scores [block × keys so far] through the SIMD
// matmul_nn kernels, which read transposes through strides) and the backward recomputes the
// probabilities from q, k and lse.
// Shared prefixes: when seq_parent is given, a sequence s with seq_parent[s] = p ≥ 0 continues
// sequence p, which then holds a prefix shared by all its children: s's tokens sit at positions
// len(p) onwards and attend to all of p's tokens and then causally to their own. A parent precedes
// its children and has no parent itself (seq_parent[p] = −1). The backward adds every child's
// gradient with respect to the parent's keys and values to the parent's rows, child by child in
// index order, so the sums stay deterministic.
// Products: f32, or BF16 operands summed in f32 (`products`, cpu/attention_train_products.h;
// attention_train_precision picks this CPU's kernels for a trainer's precision). The forward and
// the backward must be given the same, as the backward recomputes the probabilities from the
// forward's log-sum-exp.
// The *_rowwise variants are the plain one-query-at-a-time reference the tests compare against.
#pragma once

#include <cstdint>

#include "core/ops/packed_attention.h"
#include "core/thread_pool.h"
#include "cpu/attention_train_products.h"

namespace s3::cpu {

struct PackedAttentionShape {
  int64_t T = 0, NH = 0, NKV = 0, HD = 0;
  const int64_t* seq_begins = nullptr;
  int64_t n_seq = 0;
  int64_t block = 64;  // query rows per block
  const int64_t* seq_parent = nullptr;  // [n_seq]: the sequence each continues, or −1; nullptr: none do
};

// The parent of sequence s, or −1.
inline int64_t attention_parent(const PackedAttentionShape& shape, int64_t s) { return ops::packed_parent(shape.seq_parent, s); }

void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const PackedAttentionShape& shape, ThreadPool& pool,
                                    const AttentionTrainPrecision& products = {});

// dq [T×NH×HD], dk, dv [T×NKV×HD] overwritten.
void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const PackedAttentionShape& shape,
                               ThreadPool& pool, const AttentionTrainPrecision& products = {});

void causal_attention_train_forward_rowwise(float* out, float* lse, const float* q, const float* k, const float* v,
                                            const PackedAttentionShape& shape, ThreadPool& pool);
void causal_attention_backward_rowwise(float* dq, float* dk, float* dv, const float* dout, const float* out,
                                       const float* lse, const float* q, const float* k, const float* v,
                                       const PackedAttentionShape& shape, ThreadPool& pool);

}  // namespace s3::cpu
