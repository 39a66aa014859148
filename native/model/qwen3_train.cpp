// qwen3_train.cpp: the implementation of model/qwen3_train.h (see the header for the contract and layouts).
#include "model/qwen3_train.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "core/huge_pages.h"
#include "cpu/attention_backward.h"
#include "cpu/embedding_backward.h"
#include "cpu/matmul_backward.h"
#include "cpu/matmul_nn.h"
#include "cpu/linear_bf16.h"
#include "cpu/packed_weights.h"
#include "cpu/matrix_view.h"
#include "cpu/rmsnorm.h"
#include "cpu/rmsnorm_backward.h"
#include "cpu/rope.h"
#include "cpu/rope_backward.h"
#include "cpu/swiglu.h"
#include "cpu/swiglu_backward.h"

namespace s3::model {

namespace {

struct Dims {
  int64_t T, C, NH, NKV, HD, QD, KD, I;
  explicit Dims(const Qwen3Config& c, int64_t T_)
      : T(T_), C(c.hidden_size), NH(c.num_attention_heads), NKV(c.num_key_value_heads), HD(c.head_dim),
        QD(c.q_dim()), KD(c.kv_dim()), I(c.intermediate_size) {}
};

struct LayerActivations {
  std::vector<float> h1, q_raw, k_raw, qr, kr, v, att, lse, xmid, h2, gate, up, act;
  void resize(const Dims& d) {
    const std::pair<std::vector<float>*, int64_t> widths[] = {
        {&h1, d.C},   {&q_raw, d.QD}, {&k_raw, d.KD}, {&qr, d.QD}, {&kr, d.KD}, {&v, d.KD},  {&att, d.QD},
        {&lse, d.NH}, {&xmid, d.C},   {&h2, d.C},     {&gate, d.I}, {&up, d.I}, {&act, d.I}};
    for (const auto& [buffer, width] : widths) resize_on_huge_pages(*buffer, size_t(d.T) * size_t(width));
  }
  // The bytes these buffers hold (their capacity: a shorter batch keeps a longer one's storage).
  size_t bytes() const {
    size_t floats = 0;
    for (const std::vector<float>* b : {&h1, &q_raw, &k_raw, &qr, &kr, &v, &att, &lse, &xmid, &h2, &gate, &up, &act}) {
      floats += b->capacity();
    }
    return floats * sizeof(float);
  }
};

// Bytes of one layer's LayerActivations.
size_t layer_activation_bytes(const Dims& d) {
  const size_t per_token = size_t(3 * d.C + 3 * d.QD + 3 * d.KD + d.NH + 3 * d.I);
  return per_token * size_t(d.T) * sizeof(float);
}

// Buffers of the linear layers, reused across calls.
struct LinearScratch {
  std::vector<float> wt;              // f32: Wᵀ
  std::vector<uint16_t> weight_bf16;  // bf16 below avx512bf16: W rounded
  std::vector<float> input;           // bf16, at levels whose kernels do not round the input
  cpu::MatmulNnBf16PackedB wt_panels;  // bf16 at avx512bf16: Wᵀ in panels, packed per call
  cpu::PackedWeights packed;            // bf16 at amx: the weights' tiles, packed once per version
  cpu::MatmulNnBf16PackedA input_tiles;  // bf16 at the amx level: an input several layers multiply (share_input_tiles)
  cpu::MatmulNnBf16PackedB input_pairs;  // the same for their weight gradients (share_input_pairs)
};

// The level's BF16 C = A·B kernels that pack weights straight from their rows (avx512bf16, amx) at
// this precision, or null.
const cpu::MatmulNnBf16Kernels* linear_kernels(MatmulPrecision precision) {
  return precision == MatmulPrecision::Bf16 ? cpu::packed_weight_kernels() : nullptr;
}

// The same where they are tile kernels (amx): those keep the weights packed once per version and
// take inputs packed once for several products. TDPBF16PS runs so far ahead of the packing that
// repacking per product would cost a large share of the step; at avx512bf16 it costs about 1%, less
// than keeping both orientations of every weight (4 bytes per parameter) would be worth.
const cpu::MatmulNnBf16Kernels* linear_tiles(MatmulPrecision precision) {
  const cpu::MatmulNnBf16Kernels* kernels = linear_kernels(precision);
  return kernels != nullptr && kernels->tiles ? kernels : nullptr;
}

// inp [M × K] packed once as the A of the linear layers that multiply it (q, k and v; gate and
// up), valid until the next call; null where the products do not run on tiles (each linear()
// then handles its input itself).
const cpu::MatmulNnBf16PackedA* share_input_tiles(const float* inp, int64_t M, int64_t K, LinearScratch& scratch,
                                                  MatmulPrecision precision, ThreadPool& pool) {
  const cpu::MatmulNnBf16Kernels* tiles = linear_tiles(precision);
  if (tiles == nullptr) return nullptr;
  cpu::matmul_nn_bf16_pack_a(scratch.input_tiles, inp, K, 1, M, K, *tiles, pool);
  return &scratch.input_tiles;
}

// The same for their backward: inp packed once as the B of their weight gradients doutᵀ · inp.
const cpu::MatmulNnBf16PackedB* share_input_pairs(const float* inp, int64_t M, int64_t K, LinearScratch& scratch,
                                                  MatmulPrecision precision, ThreadPool& pool) {
  const cpu::MatmulNnBf16Kernels* tiles = linear_tiles(precision);
  if (tiles == nullptr) return nullptr;
  cpu::matmul_nn_bf16_pack_b(scratch.input_pairs, inp, K, M, K, *tiles, pool);
  return &scratch.input_pairs;
}

// out[M × N] = inp[M × K] · Wᵀ for the f32 weight W [N × K] at params + offset. In f32 the
// training path goes through the C = A·B kernels of cpu/matmul_nn.h (no horizontal sums, so faster
// than the inference kernels on the small hidden sizes of training runs): W is transposed once per
// call into wt, whose cost is 1/M of the product's. In bf16 at the avx512bf16 and amx levels, the
// level's C = A·B kernel on Wᵀ packed straight from W's rows (avx512bf16: into panels, per call;
// amx: into tiles, once per version of the parameters, cpu/packed_weights.h); each element is one
// chain over k in increasing order, as in the level's forward kernel on packed weights
// (cpu/weight_panels.h, cpu/matmul_amx_kernel.h), so the trainer's linear layers give the inference
// forward's bits on the same BF16 input and weights. Below avx512bf16, W is rounded to BF16 rows
// once per call and multiplied by the BF16-weight forward kernels (cpu/linear_bf16.h).
// inp_tiles: inp already packed (share_input_tiles), or null.
void linear(float* out, const float* inp, const float* params, size_t offset, int64_t M, int64_t N, int64_t K,
            LinearScratch& scratch, MatmulPrecision precision, ThreadPool& pool,
            const cpu::MatmulNnBf16PackedA* inp_tiles = nullptr) {
  const float* w = params + offset;
  if (precision == MatmulPrecision::Bf16) {
    if (const cpu::MatmulNnBf16Kernels* kernels = linear_kernels(precision)) {
      if (!kernels->tiles) cpu::matmul_nn_bf16_pack_b_transposed(scratch.wt_panels, w, K, K, N, *kernels, pool);
      const cpu::MatmulNnBf16PackedB& w_tiles =
          kernels->tiles ? scratch.packed.packed(w, N, K, true, *kernels, pool) : scratch.wt_panels;
      if (inp_tiles != nullptr) {
        cpu::matmul_nn_bf16(cpu::matmul_nn_args(out, nullptr, nullptr, M, N, K, false), *inp_tiles, w_tiles, pool);
      } else {
        cpu::matmul_nn_bf16(cpu::matmul_nn_args(out, inp, nullptr, M, N, K, false), w_tiles, pool);
      }
      return;
    }
    scratch.weight_bf16.resize(size_t(N * K));
    cpu::round_to_bf16(scratch.weight_bf16.data(), w, N * K, pool);
    cpu::linear_bf16(out, inp, scratch.weight_bf16.data(), M, N, K, scratch.input, pool);
    return;
  }
  std::vector<float>& wt = scratch.wt;
  wt.resize(size_t(N * K));
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  pool.parallel_for(size_t(blocks), [&](size_t begin, size_t end, size_t) {
    for (int64_t n0 = int64_t(begin) * kBlock; n0 < int64_t(end) * kBlock && n0 < N; n0 += kBlock) {
      const int64_t n1 = std::min(N, n0 + kBlock);
      for (int64_t k0 = 0; k0 < K; k0 += kBlock) {
        const int64_t k1 = std::min(K, k0 + kBlock);
        for (int64_t n = n0; n < n1; n++) {
          for (int64_t k = k0; k < k1; k++) wt[size_t(k * N + n)] = w[n * K + k];
        }
      }
    }
  });
  cpu::matmul_nn(cpu::matmul_nn_args(out, inp, wt.data(), M, N, K, false), pool);
}

// The backward of linear(): dinp = dout · W (skipped when null) and grads_w += doutᵀ · inp, at the
// forward's precision; at the amx level dinp runs on W's tiles, packed once per version.
// inp_pairs: inp already packed (share_input_pairs), or null.
void linear_backward(float* dinp, float* grads_w, const float* dout, const float* inp, const float* w, int64_t M, int64_t N,
                     int64_t K, LinearScratch& scratch, MatmulPrecision precision, ThreadPool& pool,
                     const cpu::MatmulNnBf16PackedB* inp_pairs = nullptr) {
  if (const cpu::MatmulNnBf16Kernels* tiles = linear_tiles(precision)) {
    const cpu::MatmulNnBf16PackedB& w_tiles = scratch.packed.packed(w, N, K, false, *tiles, pool);
    if (inp_pairs != nullptr) {
      cpu::matmul_backward(dinp, grads_w, dout, M, N, K, pool, w_tiles, *inp_pairs);
    } else {
      cpu::matmul_backward(dinp, grads_w, dout, inp, M, N, K, pool, w_tiles);
    }
  } else {
    cpu::matmul_backward(dinp, grads_w, dout, inp, w, M, N, K, pool, precision);
  }
}

// The elementwise work goes to the pool in units of a fixed size, so that no result depends on the
// thread count: fn(begin, end) for consecutive [begin, end) of at most `unit` items of [0, n).
template <typename Fn>
void for_units(ThreadPool& pool, int64_t n, int64_t unit, Fn fn) {
  const int64_t units = (n + unit - 1) / unit;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    for (size_t u = begin; u < end; u++) fn(int64_t(u) * unit, std::min(n, int64_t(u + 1) * unit));
  });
}

constexpr int64_t kRowsPerUnit = 64;
constexpr int64_t kElementsPerUnit = 16384;

void rmsnorm_rows(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps, ThreadPool& pool) {
  for_units(pool, N, kRowsPerUnit, [&](int64_t r0, int64_t r1) {
    cpu::rmsnorm_forward(out + r0 * C, inp + r0 * C, weight, r1 - r0, C, eps);
  });
}

// rmsnorm_backward on units of rows, each adding its weight gradient into its own row of
// `partial`; the rows are then added in unit order. With `residual`, dinp = residual + the gradient
// (the residual stream's gradient in the same pass).
void rmsnorm_backward_rows(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                           int64_t C, float eps, std::vector<float>& partial, ThreadPool& pool,
                           const float* residual = nullptr) {
  const int64_t units = (N + kRowsPerUnit - 1) / kRowsPerUnit;
  partial.assign(size_t(units * C), 0.0f);
  for_units(pool, N, kRowsPerUnit, [&](int64_t r0, int64_t r1) {
    cpu::rmsnorm_backward(dinp + r0 * C, partial.data() + (r0 / kRowsPerUnit) * C, dout + r0 * C, inp + r0 * C, weight,
                          r1 - r0, C, eps, residual != nullptr ? residual + r0 * C : nullptr);
  });
  for (int64_t u = 0; u < units; u++) {
    for (int64_t i = 0; i < C; i++) dweight[i] += partial[size_t(u * C + i)];
  }
}

// out[i] = a[i] + b[i] (out may alias a or b).
void add(float* out, const float* a, const float* b, int64_t n, ThreadPool& pool) {
  for_units(pool, n, kElementsPerUnit, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) out[i] = a[i] + b[i];
  });
}

cpu::PackedAttentionShape attention_shape(const Dims& d, const Qwen3TrainBatch& batch) {
  cpu::PackedAttentionShape shape{d.T, d.NH, d.NKV, d.HD, batch.seq_begins, batch.n_seq};
  shape.seq_parent = batch.seq_parent;
  return shape;
}

// One decoder layer: xout = layer(xin), keeping everything the backward needs in a.
void layer_forward(const Qwen3Config& c, const Dims& d, const Qwen3ParamLayout::Layer& L, const float* params,
                   const Qwen3TrainBatch& batch, const Qwen3TrainState& state, const float* xin, float* xout,
                   LayerActivations& a, std::vector<float>& scratch, LinearScratch& linear_scratch, ThreadPool& pool) {
  const float eps = c.rms_norm_eps;
  const MatmulPrecision mp = state.precision;
  rmsnorm_rows(a.h1.data(), xin, params + L.input_layernorm, d.T, d.C, eps, pool);
  const cpu::MatmulNnBf16PackedA* h1_tiles = share_input_tiles(a.h1.data(), d.T, d.C, linear_scratch, mp, pool);
  linear(a.q_raw.data(), a.h1.data(), params, L.q_proj, d.T, d.QD, d.C, linear_scratch, mp, pool, h1_tiles);
  linear(a.k_raw.data(), a.h1.data(), params, L.k_proj, d.T, d.KD, d.C, linear_scratch, mp, pool, h1_tiles);
  linear(a.v.data(), a.h1.data(), params, L.v_proj, d.T, d.KD, d.C, linear_scratch, mp, pool, h1_tiles);
  rmsnorm_rows(a.qr.data(), a.q_raw.data(), params + L.q_norm, d.T * d.NH, d.HD, eps, pool);
  rmsnorm_rows(a.kr.data(), a.k_raw.data(), params + L.k_norm, d.T * d.NKV, d.HD, eps, pool);
  cpu::rope_forward(a.qr.data(), state.cos.data(), state.sin.data(), d.T, d.NH, d.HD);
  cpu::rope_forward(a.kr.data(), state.cos.data(), state.sin.data(), d.T, d.NKV, d.HD);
  cpu::causal_attention_train_forward(a.att.data(), a.lse.data(), a.qr.data(), a.kr.data(), a.v.data(),
                                      attention_shape(d, batch), pool, cpu::attention_train_precision(mp));
  scratch.resize(size_t(d.T * d.C));
  linear(scratch.data(), a.att.data(), params, L.o_proj, d.T, d.C, d.QD, linear_scratch, mp, pool);
  add(a.xmid.data(), xin, scratch.data(), d.T * d.C, pool);
  rmsnorm_rows(a.h2.data(), a.xmid.data(), params + L.post_attention_layernorm, d.T, d.C, eps, pool);
  const cpu::MatmulNnBf16PackedA* h2_tiles = share_input_tiles(a.h2.data(), d.T, d.C, linear_scratch, mp, pool);
  linear(a.gate.data(), a.h2.data(), params, L.gate_proj, d.T, d.I, d.C, linear_scratch, mp, pool, h2_tiles);
  linear(a.up.data(), a.h2.data(), params, L.up_proj, d.T, d.I, d.C, linear_scratch, mp, pool, h2_tiles);
  for_units(pool, d.T * d.I, kElementsPerUnit, [&](int64_t i0, int64_t i1) {
    cpu::swiglu_forward(a.act.data() + i0, a.gate.data() + i0, a.up.data() + i0, i1 - i0);
  });
  linear(scratch.data(), a.act.data(), params, L.down_proj, d.T, d.C, d.I, linear_scratch, mp, pool);
  add(xout, a.xmid.data(), scratch.data(), d.T * d.C, pool);
}

// The rotary position of sequence s's first token: its parent's length (0 without one).
int64_t position_offset(const Qwen3TrainBatch& batch, int64_t s) {
  const int64_t parent = batch.seq_parent == nullptr ? -1 : batch.seq_parent[s];
  return parent < 0 ? 0 : batch.seq_begins[parent + 1] - batch.seq_begins[parent];
}

}  // namespace

void check_qwen3_train_batch(const Qwen3Config& c, const Qwen3TrainBatch& batch) {
  if (batch.T <= 0 || batch.n_seq <= 0 || batch.seq_begins[0] != 0 || batch.seq_begins[batch.n_seq] != batch.T) {
    throw std::invalid_argument("qwen3 training batch: seq_begins must run from 0 to T");
  }
  for (int64_t s = 0; s < batch.n_seq; s++) {
    if (batch.seq_begins[s + 1] <= batch.seq_begins[s]) throw std::invalid_argument("qwen3 training batch: empty sequence");
    const int64_t parent = batch.seq_parent == nullptr ? -1 : batch.seq_parent[s];
    if (parent < -1 || parent >= s || (parent >= 0 && batch.seq_parent[parent] != -1)) {
      throw std::invalid_argument("qwen3 training batch: sequence " + std::to_string(s) + " has parent " +
                                  std::to_string(parent) + "; want −1 or an earlier sequence without a parent");
    }
    if (batch.seq_begins[s + 1] - batch.seq_begins[s] + position_offset(batch, s) > c.max_position_embeddings) {
      throw std::invalid_argument("qwen3 training batch: sequence longer than max_position_embeddings");
    }
  }
  for (int64_t t = 0; t < batch.T; t++) {
    if (batch.tokens[t] < 0 || batch.tokens[t] >= c.vocab_size) {
      throw std::invalid_argument("qwen3 training batch: token " + std::to_string(batch.tokens[t]) + " out of range");
    }
  }
}

std::vector<int64_t> qwen3_train_positions(const Qwen3TrainBatch& batch) {
  std::vector<int64_t> positions(size_t(batch.T));
  for (int64_t s = 0; s < batch.n_seq; s++) {
    const int64_t offset = position_offset(batch, s);
    for (int64_t t = batch.seq_begins[s]; t < batch.seq_begins[s + 1]; t++) {
      positions[size_t(t)] = offset + t - batch.seq_begins[s];
    }
  }
  return positions;
}

struct Qwen3SavedLayers {
  std::vector<LayerActivations> layers;
};

struct Qwen3TrainWorkspace {
  LayerActivations layer;  // the forward's one layer when activations are not saved; the backward's recompute
  std::vector<float> scratch, partial;
  LinearScratch linear;
  std::vector<float> dx, dxmid, tmpC, dh, d_act, dgate, dup, datt, dq, dq_raw, dk, dv, dk_raw;
};

size_t qwen3_train_activation_bytes(const Qwen3Config& config, int64_t T) {
  return size_t(config.num_hidden_layers) * layer_activation_bytes(Dims(config, T));
}

size_t qwen3_train_saved_bytes(const Qwen3TrainState& state) {
  if (state.saved == nullptr) return 0;
  size_t bytes = 0;
  for (const LayerActivations& layer : state.saved->layers) bytes += layer.bytes();
  return bytes;
}

void qwen3_train_forward(const Qwen3Config& c, const Qwen3ParamLayout& layout, const float* params,
                         const Qwen3TrainBatch& batch, Qwen3TrainState& state, ThreadPool& pool,
                         MatmulPrecision precision, size_t saved_activation_bytes) {
  check_qwen3_train_batch(c, batch);
  state.precision = precision;
  const Dims d(c, batch.T);
  const size_t TC = size_t(d.T * d.C);
  const int64_t L = c.num_hidden_layers;
  resize_on_huge_pages(state.layer_inputs, size_t(L + 1) * TC);
  resize_on_huge_pages(state.final_normed, TC);
  const std::vector<int64_t> positions = qwen3_train_positions(batch);
  state.cos.resize(size_t(d.T * d.HD / 2));
  state.sin.resize(size_t(d.T * d.HD / 2));
  cpu::rope_tables(state.cos.data(), state.sin.data(), positions.data(), d.T, d.HD, c.rope_theta);
  float* x0 = state.layer_inputs.data();
  for (int64_t t = 0; t < d.T; t++) {
    std::memcpy(x0 + t * d.C, params + layout.embed + size_t(batch.tokens[t]) * size_t(d.C), size_t(d.C) * sizeof(float));
  }
  // Keep every layer's activations when they fit the budget; otherwise reuse one set.
  const bool save = size_t(L) * layer_activation_bytes(d) <= saved_activation_bytes;
  if (save) {
    // The last pass's saved layers are reused unless someone else still holds them.
    if (state.saved == nullptr || state.saved.use_count() != 1) state.saved = std::make_shared<Qwen3SavedLayers>();
    state.saved->layers.resize(size_t(L));
  } else {
    state.saved.reset();
  }
  if (state.workspace == nullptr) state.workspace = std::make_shared<Qwen3TrainWorkspace>();
  Qwen3TrainWorkspace& w = *state.workspace;
  w.linear.packed.use_version(params, state.params_version);
  for (int64_t l = 0; l < L; l++) {
    LayerActivations& out = save ? state.saved->layers[size_t(l)] : w.layer;
    out.resize(d);
    layer_forward(c, d, layout.layers[size_t(l)], params, batch, state, x0 + size_t(l) * TC, x0 + size_t(l + 1) * TC, out,
                  w.scratch, w.linear, pool);
  }
  cpu::rmsnorm_forward(state.final_normed.data(), x0 + size_t(L) * TC, params + layout.norm, d.T, d.C, c.rms_norm_eps);
}

void qwen3_train_backward(const Qwen3Config& c, const Qwen3ParamLayout& layout, const float* params, float* grads,
                          const Qwen3TrainBatch& batch, const Qwen3TrainState& state, const float* d_final_normed,
                          ThreadPool& pool, const std::function<void(int64_t layer)>& on_layer_done) {
  const Dims d(c, batch.T);
  const size_t TC = size_t(d.T * d.C);
  const int64_t L = c.num_hidden_layers;
  const float eps = c.rms_norm_eps;
  const MatmulPrecision mp = state.precision;
  const float* x0 = state.layer_inputs.data();
  // Every buffer below is overwritten before it is read, so reused ones give the same bits as fresh.
  Qwen3TrainWorkspace local;
  Qwen3TrainWorkspace& w = state.workspace != nullptr ? *state.workspace : local;
  std::vector<float>&dx = w.dx, &dxmid = w.dxmid, &tmpC = w.tmpC, &dh = w.dh, &scratch = w.scratch, &partial = w.partial;
  std::vector<float>&d_act = w.d_act, &dgate = w.dgate, &dup = w.dup, &datt = w.datt, &dq = w.dq, &dq_raw = w.dq_raw;
  std::vector<float>&dk = w.dk, &dv = w.dv, &dk_raw = w.dk_raw;
  for (std::vector<float>* b : {&dx, &dxmid, &tmpC, &dh}) resize_on_huge_pages(*b, TC);
  for (std::vector<float>* b : {&d_act, &dgate, &dup}) resize_on_huge_pages(*b, size_t(d.T * d.I));
  for (std::vector<float>* b : {&datt, &dq, &dq_raw}) resize_on_huge_pages(*b, size_t(d.T * d.QD));
  for (std::vector<float>* b : {&dk, &dv, &dk_raw}) resize_on_huge_pages(*b, size_t(d.T * d.KD));
  cpu::rmsnorm_backward(dx.data(), grads + layout.norm, d_final_normed, x0 + size_t(L) * TC, params + layout.norm, d.T,
                        d.C, eps);
  LayerActivations& recomputed = w.layer;
  LinearScratch& linear_scratch = w.linear;
  const cpu::PackedAttentionShape shape = attention_shape(d, batch);
  for (int64_t l = L - 1; l >= 0; l--) {
    const Qwen3ParamLayout::Layer& W = layout.layers[size_t(l)];
    const float* xin = x0 + size_t(l) * TC;
    if (!state.saved) {
      recomputed.resize(d);
      layer_forward(c, d, W, params, batch, state, xin, tmpC.data(), recomputed, scratch, linear_scratch, pool);
    }
    const LayerActivations& a = state.saved ? state.saved->layers[size_t(l)] : recomputed;
    // MLP: xout = xmid + down(swiglu(gate(h2), up(h2))), h2 = norm(xmid).
    linear_backward(d_act.data(), grads + W.down_proj, dx.data(), a.act.data(), params + W.down_proj, d.T, d.C,
                    d.I, linear_scratch, mp, pool);
    for_units(pool, d.T * d.I, kElementsPerUnit, [&](int64_t i0, int64_t i1) {
      cpu::swiglu_backward(dgate.data() + i0, dup.data() + i0, d_act.data() + i0, a.gate.data() + i0, a.up.data() + i0,
                           i1 - i0);
    });
    const cpu::MatmulNnBf16PackedB* h2_pairs = share_input_pairs(a.h2.data(), d.T, d.C, linear_scratch, mp, pool);
    linear_backward(dh.data(), grads + W.gate_proj, dgate.data(), a.h2.data(), params + W.gate_proj, d.T, d.I,
                    d.C, linear_scratch, mp, pool, h2_pairs);
    linear_backward(tmpC.data(), grads + W.up_proj, dup.data(), a.h2.data(), params + W.up_proj,
                    d.T, d.I, d.C, linear_scratch, mp, pool, h2_pairs);
    add(dh.data(), dh.data(), tmpC.data(), d.T * d.C, pool);
    rmsnorm_backward_rows(dxmid.data(), grads + W.post_attention_layernorm, dh.data(), a.xmid.data(),
                          params + W.post_attention_layernorm, d.T, d.C, eps, partial, pool, dx.data());  // dxmid = dx + ∂/∂xmid
    // Attention: xmid = xin + o_proj(attn(rope(qnorm(q)), rope(knorm(k)), v)), from h1 = norm(xin).
    linear_backward(datt.data(), grads + W.o_proj, dxmid.data(), a.att.data(), params + W.o_proj,
                    d.T, d.C, d.QD, linear_scratch, mp, pool);
    cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), datt.data(), a.att.data(), a.lse.data(),
                                   a.qr.data(), a.kr.data(), a.v.data(), shape, pool, cpu::attention_train_precision(mp));
    cpu::rope_backward(dq.data(), state.cos.data(), state.sin.data(), d.T, d.NH, d.HD);
    cpu::rope_backward(dk.data(), state.cos.data(), state.sin.data(), d.T, d.NKV, d.HD);
    rmsnorm_backward_rows(dq_raw.data(), grads + W.q_norm, dq.data(), a.q_raw.data(), params + W.q_norm, d.T * d.NH,
                          d.HD, eps, partial, pool);
    rmsnorm_backward_rows(dk_raw.data(), grads + W.k_norm, dk.data(), a.k_raw.data(), params + W.k_norm, d.T * d.NKV,
                          d.HD, eps, partial, pool);
    const cpu::MatmulNnBf16PackedB* h1_pairs = share_input_pairs(a.h1.data(), d.T, d.C, linear_scratch, mp, pool);
    linear_backward(dh.data(), grads + W.q_proj, dq_raw.data(), a.h1.data(), params + W.q_proj,
                    d.T, d.QD, d.C, linear_scratch, mp, pool, h1_pairs);
    linear_backward(tmpC.data(), grads + W.k_proj, dk_raw.data(), a.h1.data(), params + W.k_proj,
                    d.T, d.KD, d.C, linear_scratch, mp, pool, h1_pairs);
    add(dh.data(), dh.data(), tmpC.data(), d.T * d.C, pool);
    linear_backward(tmpC.data(), grads + W.v_proj, dv.data(), a.h1.data(), params + W.v_proj,
                    d.T, d.KD, d.C, linear_scratch, mp, pool, h1_pairs);
    add(dh.data(), dh.data(), tmpC.data(), d.T * d.C, pool);
    rmsnorm_backward_rows(dx.data(), grads + W.input_layernorm, dh.data(), xin, params + W.input_layernorm, d.T, d.C, eps,
                          partial, pool, dxmid.data());  // dx = dxmid + ∂/∂xin
    if (on_layer_done) on_layer_done(l);
  }
  cpu::embedding_backward(grads + layout.embed, dx.data(), batch.tokens, d.T, d.C);
}

}  // namespace s3::model
