// qwen3_train: the Qwen3 training pass on f32 master parameters (the flat buffer of
// qwen3_param_layout.h): a training forward over packed sequences that keeps each layer's input
// and, when they fit the caller's budget, its activations (otherwise activation checkpointing: the
// backward recomputes one layer at a time), and the backward from the gradient
// of the final normed hidden states down to every parameter. The two share the saved activations,
// so they live together. The LM head and the loss are fused elsewhere (native/train/losses.h) so
// [T × V] logits are never materialized for the whole batch.
// Gradients accumulate (+=) into a buffer of the same layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/matmul_precision.h"
#include "core/thread_pool.h"
#include "model/qwen3_config.h"
#include "model/qwen3_param_layout.h"
#include "model/qwen3_weights.h"

namespace s3::model {

// Packed sequences: tokens [T]; seq_begins [n_seq + 1] with seq_begins[0] = 0 and
// seq_begins[n_seq] = T; every sequence restarts at rotary position 0. With seq_parent, a sequence
// s with seq_parent[s] = p ≥ 0 continues sequence p (a shared prefix, cpu/attention_backward.h):
// its tokens take positions len(p) onwards and attend to p's tokens; p comes before s and has no
// parent itself.
struct Qwen3TrainBatch {
  const int32_t* tokens = nullptr;
  int64_t T = 0;
  const int64_t* seq_begins = nullptr;
  int64_t n_seq = 0;
  const int64_t* seq_parent = nullptr;  // [n_seq], −1 for none; nullptr: no sequence has a parent
};

// Refuses a batch whose sequences do not run from 0 to T, are empty, name a parent that is not an
// earlier parentless sequence, outrun max_position_embeddings, or hold out-of-vocabulary tokens.
void check_qwen3_train_batch(const Qwen3Config& config, const Qwen3TrainBatch& batch);

// Each token's rotary position: its index in its sequence, after its parent's length.
std::vector<int64_t> qwen3_train_positions(const Qwen3TrainBatch& batch);

// Every layer's activations as the forward left them (defined in qwen3_train.cpp).
struct Qwen3SavedLayers;

// Bytes all layers' activations take for a batch of T tokens: what the forward keeps for the
// backward when its budget allows (Qwen3-0.6B at 2,048 tokens: 4.9 GB).
size_t qwen3_train_activation_bytes(const Qwen3Config& config, int64_t T);

// The budget of a forward whose caller names none: every layer's activations of the small shapes
// and short sequences the tests train on fit it.
constexpr size_t kQwen3SavedActivationBytes = size_t(512) << 20;

// The forward's and backward's own buffers (defined in qwen3_train.cpp), kept in the state so the
// next pass on it reuses their pages instead of faulting in fresh ones.
struct Qwen3TrainWorkspace;

struct Qwen3TrainState {
  std::vector<float> layer_inputs;  // [(L + 1) × T × C]: the residual stream entering each layer, then the last
  std::vector<float> final_normed;  // [T × C]: model.norm of the last residual, the LM head's input
  std::vector<float> cos, sin;      // rope tables [T × HD/2]
  std::shared_ptr<Qwen3SavedLayers> saved;  // null when the backward recomputes each layer
  // The precision of the linear layers' products in the forward, which the backward's products
  // (and any recompute) then use too. Attention, norms, RoPE and SwiGLU are f32 at either.
  MatmulPrecision precision = MatmulPrecision::F32;
  // The caller's version of the parameters: a forward on the same parameter buffer and the same
  // nonzero version reuses the weights' BF16 tiles of the last pass (cpu/packed_weights.h, the amx
  // level), so a caller that changes the parameters must change it. 0: unknown, packed every pass.
  uint64_t params_version = 0;
  // Made by the first forward on this state and reused by every later pass on it.
  std::shared_ptr<Qwen3TrainWorkspace> workspace;
};

// Fills state (layer inputs, final_normed) for the batch. With bf16 precision every linear layer
// multiplies BF16-rounded inputs and weights, accumulating in f32 (cpu/matmul_nn_bf16.h). Every
// layer's activations are kept in state when qwen3_train_activation_bytes fits
// saved_activation_bytes, and the backward then uses them instead of recomputing each layer (a
// quarter less matmul work); otherwise only the layer inputs are kept. The bits are the same either way.
void qwen3_train_forward(const Qwen3Config& config, const Qwen3ParamLayout& layout, const float* params,
                         const Qwen3TrainBatch& batch, Qwen3TrainState& state, ThreadPool& pool,
                         MatmulPrecision precision = MatmulPrecision::F32,
                         size_t saved_activation_bytes = kQwen3SavedActivationBytes);

// Bytes of saved activations `state` holds now (0 when its last forward left the backward to recompute).
size_t qwen3_train_saved_bytes(const Qwen3TrainState& state);

// d_final_normed [T × C]: the loss gradient with respect to state.final_normed. Adds the
// parameter gradients into grads (same layout as params). Recomputes each layer's activations
// when the forward did not keep them. The linear layers' products run at state.precision.
// on_layer_done(l), when given, is called as soon as layer l's gradients are complete (layers from
// the last to the first; nothing writes them afterwards), on the calling thread.
void qwen3_train_backward(const Qwen3Config& config, const Qwen3ParamLayout& layout, const float* params, float* grads,
                          const Qwen3TrainBatch& batch, const Qwen3TrainState& state, const float* d_final_normed,
                          ThreadPool& pool, const std::function<void(int64_t layer)>& on_layer_done = {});

}  // namespace s3::model
