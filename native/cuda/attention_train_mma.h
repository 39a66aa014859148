// attention_train_mma.h: the training attention of attention_backward.h (causal grouped-query
// attention over packed sequences with shared prefixes: forward with each row's log-sum-exp, and
// the backward to dq, dk, dv) on tensor cores, FlashAttention-2's way: blocks of 64 query rows (or
// 64 keys) in 4 warps of 16, both products of each step on mma.sync.m16n8k16 with bf16 operands and
// f32 accumulation, the T × T scores never stored.
//   forward: block (64 query rows, query head), over 64-key tiles: S = Q·Kᵀ, the online softmax in
//            f32, O += bf16(P)·V; out = O / l, lse = m + log l.
//   dq:      block (64 query rows, query head), over 32-key tiles: P from lse, dP = dO·Vᵀ,
//            dS = P ∘ (dP − Δ), dq += bf16(dS)·K.
//   dk, dv:  block (64 keys, KV head), over 32-query tiles and, within each, the group's query heads
//            in order: Pᵀ and dSᵀ as above, dv += bf16(Pᵀ)·dO, dk += bf16(dSᵀ)·Q; so a key's terms
//            are summed in one block, with no atomics.
// Tiles are fixed ranges of absolute rows, each (query, key) pair masked by core/ops/packed_attention.h's
// visibility (the parent's rows, then the sequence's own up to the query), and a tile no row of the
// block sees is skipped. Parents must precede their children in the batch (as train/shared_prefixes.h
// packs them). Every sum is in a fixed order (the tensor core's within an mma, then k chunks and tiles
// in order; row sums by a fixed butterfly), so the same inputs give the same bits.
//
// Precision: q, k, v and dout (once per call, into the scratch), the softmax weights P and the score
// gradients dS are rounded to bf16 before their products (FlashAttention-2's numerics); softmax,
// lse, Δ = Σ dout·out and every accumulator stay f32. Against the CPU's f32 attention: out NMSE ≈ 1e-5, dq, dk, dv 4e-5..1e-4 (the
// GPU test holds them to 1e-4 and 3e-4). The trainer uses it for precision.train bf16 when
// S3_CUDA_TRAIN_ATTENTION=mma (the f32 kernels stay the default until a GPU has run these).
// Not run on a GPU yet: compiled for sm_80 and sm_90a, and run on the CPU in an emulation of the
// warp instructions (scripts/cuda-emulation/emulate.py, the figures above). Device pointers; the
// shapes of attention_backward.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/attention_backward.h"

namespace s3::cuda {

// Head shapes these kernels serve: NH a multiple of NKV, HD 16, 32, 64 or 128, and T < 2^31.
bool attention_train_mma_supports(int64_t NH, int64_t NKV, int64_t HD);

// The implementation the trainer's bf16 attention uses: S3_CUDA_TRAIN_ATTENTION = "f32" (the
// default: attention_backward.h) or "mma" (this file), read once per process; anything else is
// refused with the accepted values.
bool train_attention_uses_mma();

// Device scratch either call needs: bf16 copies of q, k, v and dout (made once per call, so every
// tile is staged with 16-byte copies of half the bytes) and Δ.
size_t attention_train_mma_scratch_bytes(int64_t T, int64_t NH, int64_t NKV, int64_t HD);

// As causal_attention_train_forward (attention_backward.h), with scratch of
// attention_train_mma_scratch_bytes.
void causal_attention_train_forward_mma(float* out, float* lse, const float* q, const float* k, const float* v,
                                        const DevicePackedAttention& shape, void* scratch, cudaStream_t stream);

// As causal_attention_backward, with scratch of attention_train_mma_scratch_bytes.
void causal_attention_backward_mma(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                                   const float* q, const float* k, const float* v, const DevicePackedAttention& shape,
                                   void* scratch, cudaStream_t stream);

}  // namespace s3::cuda
