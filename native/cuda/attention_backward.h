// attention_backward.h: the CUDA twin of cpu/attention_backward.h, causal grouped-query attention
// over packed sequences for training (shared prefixes included: core/ops/packed_attention.h), f32.
// Flash-style: no T × T matrix is stored; the forward keeps each row's log-sum-exp and the backward
// recomputes the probabilities from it. Three kernels, each a thread block per (row, KV head)
// serving the G query heads of the group, so a key or query row is read once per group:
//   forward:  block (query t, head g), online softmax over tiles of kAttentionTrainTile keys;
//   dq:       block (query t, head g), over t's keys;
//   dk, dv:   block (key r, head g), over the queries that see r: r's own sequence from r on, then
//             every child of r's sequence (index order), so a parent's rows collect their children's
//             terms without atomics.
// Every sum runs in a fixed order (per-thread sequential sums, fixed-tree reductions), so the same
// inputs give the same bits; the order differs from the CPU's, so the two agree to f32 rounding.
// CUDA cores, f32 throughout (attention_train_mma.h is the bf16 tensor-core form). The shared-memory
// row staging has not run on a GPU since the first H200 run (docs/cuda.md). Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace s3::cuda {

constexpr int kAttentionTrainTile = 128;  // keys (or queries) per tile: the kernels' block size
constexpr int64_t kAttentionTrainMaxGroup = 8;
constexpr int64_t kAttentionTrainMaxHeadDim = 256;

// The packed batch; seq_begins [n_seq + 1] and seq_parent [n_seq] (or null: no shared prefixes) in
// device memory, as cpu::PackedAttentionShape holds them on the host.
struct DevicePackedAttention {
  int64_t T = 0, NH = 0, NKV = 0, HD = 0;
  const int64_t* seq_begins = nullptr;
  const int64_t* seq_parent = nullptr;
  int64_t n_seq = 0;
};

// Whether these kernels serve the head shape: NH a multiple of NKV, G = NH/NKV ≤ 8, HD ≤ 256.
bool attention_train_supports(int64_t NH, int64_t NKV, int64_t HD);

// Device scratch causal_attention_backward needs (each row's Σ dout·out per head).
size_t attention_backward_scratch_bytes(int64_t T, int64_t NH);

// out, q: [T × NH × HD]; k, v: [T × NKV × HD]; lse: [T × NH] (natural log of each softmax
// denominator, in units of the scaled scores); scores scaled by 1/√HD.
void causal_attention_train_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                    const DevicePackedAttention& shape, cudaStream_t stream);

// delta[i] = Σ_d dout[i × HD + d] · out[i × HD + d] for each of `rows` rows (a warp per row, fixed
// tree): the softmax backward's per-row term, shared with attention_train_mma.h's backward.
void attention_row_deltas(float* delta, const float* dout, const float* out, int64_t rows, int64_t HD, cudaStream_t stream);

// dq [T × NH × HD], dk, dv [T × NKV × HD] overwritten.
void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const DevicePackedAttention& shape,
                               void* scratch, cudaStream_t stream);

}  // namespace s3::cuda
