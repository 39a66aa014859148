// attention_train_products.h: the matrix products of the training attention (attention_backward.cpp)
// for one unit of work (one sequence's visible keys and values of one KV head) on the calling
// thread, in one of two precisions:
// - f32: matmul_nn_serial over the operands as they lie (transposes read through strides), every
//   element one FMA chain in increasing k;
// - BF16 (`precision.train: bf16`): q, k, v, dout, the probabilities P and the score gradients dS
//   rounded to BF16 (round-to-nearest-even), the products summed in f32, as the device trainer's
//   tensor-core attention does. Where the CPU has BF16 kernels (matmul_nn_bf16.h: avx512bf16 and
//   amx) they run the products: the keys and values are packed once per unit in both layouts the
//   kernels read, a block's queries once per block, and dK, dV accumulate transposed ([HD × keys]:
//   dKᵀ += Q_bᵀ · dS), so no score matrix is ever transposed. Below avx512bf16 the f32 products run
//   on rounded copies of the operands (exact products of BF16 values, f32 sums), so the numerics
//   differ between levels only in the order of f32 sums.
// In both, each output element's sum runs in an order fixed by the shapes alone (never by the
// thread split), and dK, dV add the blocks and query heads of a unit in increasing order.
#pragma once

#include <cstdint>
#include <memory>

#include "core/matmul_precision.h"
#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {

// One unit's visible keys and values, gathered contiguously: rows [n × HD], and transposed [HD × n].
struct AttentionUnitKeys {
  const float *k, *v, *kt, *vt;
  int64_t n, HD;
};

class AttentionTrainProducts {
 public:
  virtual ~AttentionTrainProducts() = default;
  // A new unit: its keys (kept by reference until the next call) and, for the backward's units
  // (those with vt), dK = dV = 0.
  virtual void start_unit(const AttentionUnitKeys& keys) = 0;
  // S [nb × nk] (rows nk apart) = Q_b · K[0, nk)ᵀ; q's rows ldq apart.
  virtual void scores(float* s, const float* q, int64_t ldq, int64_t nb, int64_t nk) = 0;
  // dP [nb × nk] = dO_b · V[0, nk)ᵀ.
  virtual void value_scores(float* dp, const float* dout, int64_t ld, int64_t nb, int64_t nk) = 0;
  // O [nb × HD] (rows ldo apart) = P [nb × nk] · V[0, nk), P's row i the softmax's exps of row i
  // of e (rows nk apart) times inv[i] for its first valid[i] keys, 0 past them: each probability
  // one f32 multiply, as a normalizing pass over e would give. e may be overwritten.
  virtual void weighted_values(float* o, int64_t ldo, float* e, const float* inv, const int64_t* valid, int64_t nb,
                               int64_t nk) = 0;
  // dQ_b [nb × HD] (rows ld_dq apart) = dS [nb × nk] · K[0, nk), dK[0, nk) += dSᵀ · Q_b and
  // dV[0, nk) += Pᵀ · dO_b: one call, so dS is rounded once for all its products. Causal blocks:
  // row i of the block sees keys [0, nk − nb + i + 1), and ds and p are zero past them. The dK and
  // dV products may wait for the next blocks (the tile kernels run up to 512 queries of one head at
  // once, skipping the steps whose queries see none of a run of keys): ds and p are read during the
  // call, but q's and dout's rows must stay readable and unchanged until key_value_grads.
  virtual void score_grads(float* dq, int64_t ld_dq, const float* ds, const float* p, const float* q, int64_t ldq,
                           const float* dout, int64_t ld, int64_t nb, int64_t nk) = 0;
  // The unit's dK and dV, [n × HD] each (every waiting product run first).
  virtual void key_value_grads(float* dk, float* dv) = 0;
};

// The products a training attention call runs: f32, or BF16 operands through `bf16_kernels` (or,
// where that is null, f32 sums of the rounded operands).
struct AttentionTrainPrecision {
  MatmulPrecision precision = MatmulPrecision::F32;
  const MatmulNnBf16Kernels* bf16_kernels = nullptr;
};

// `precision` with this CPU's BF16 kernels (matmul_nn_bf16_kernels_for(cpu_info().level)).
AttentionTrainPrecision attention_train_precision(MatmulPrecision precision);

std::unique_ptr<AttentionTrainProducts> make_attention_train_products(const AttentionTrainPrecision& precision);

// The calling thread's products for `precision`, kept between calls with their buffers: the trainer
// runs every layer's attention on the same shapes, and fresh buffers would be allocated, zero-filled
// and faulted in again for each. Valid until this thread asks for another precision; start_unit
// resets every per-unit state.
AttentionTrainProducts& thread_attention_train_products(const AttentionTrainPrecision& precision);

}  // namespace s3::cpu
