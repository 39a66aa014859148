// The Qwen3 training pass on the device; see qwen3_train_cuda.h. The structure is qwen3_train.cpp's,
// line for line, with each CPU op replaced by its CUDA twin.
#include "model/qwen3_train_cuda.h"

#include <vector>

#include "cpu/rope.h"
#include "cuda/attention_backward.h"
#include "cuda/attention_train_mma.h"
#include "cuda/check.h"
#include "cuda/dtype_kernels.h"
#include "cuda/embedding.h"
#include "cuda/embedding_backward.h"
#include "cuda/rmsnorm.h"
#include "cuda/rmsnorm_backward.h"
#include "cuda/rope.h"
#include "cuda/rope_backward.h"
#include "cuda/swiglu.h"
#include "cuda/swiglu_backward.h"

namespace s3::model {

namespace {

struct Dims {
  int64_t T, C, NH, NKV, HD, QD, KD, I;
  Dims(const Qwen3Config& c, int64_t T_)
      : T(T_), C(c.hidden_size), NH(c.num_attention_heads), NKV(c.num_key_value_heads), HD(c.head_dim),
        QD(c.q_dim()), KD(c.kv_dim()), I(c.intermediate_size) {}
  // Floats of one layer's activations (as qwen3_train.cpp's layer_activation_bytes counts them).
  size_t layer_floats() const { return size_t(3 * C + 3 * QD + 3 * KD + NH + 3 * I) * size_t(T); }
};

float* floats(const cuda::DeviceBuffer& b) { return b.get<float>(); }

// A device buffer of n elements of T (at least one), from the allocator's cache.
template <typename T>
cuda::DeviceBuffer buffer(cuda::DeviceAllocator& allocator, size_t n, const char* what) {
  return cuda::DeviceBuffer(allocator, (n > 0 ? n : 1) * sizeof(T), what);
}

template <typename T>
void upload(const cuda::DeviceBuffer& to, const T* from, size_t n, cudaStream_t stream, const char* what) {
  cuda::check(cudaMemcpyAsync(to.get(), from, n * sizeof(T), cudaMemcpyHostToDevice, stream), what, {{"n", int64_t(n)}});
}

void copy(float* to, const float* from, size_t n, cudaStream_t stream) {
  cuda::check(cudaMemcpyAsync(to, from, n * sizeof(float), cudaMemcpyDeviceToDevice, stream), "training copy", {{"n", int64_t(n)}});
}

cuda::DevicePackedAttention attention_shape(const Dims& d, const Qwen3DeviceTrainState& state) {
  return cuda::DevicePackedAttention{d.T,
                                     d.NH,
                                     d.NKV,
                                     d.HD,
                                     state.seq_begins.get<int64_t>(),
                                     state.has_parents ? state.seq_parent.get<int64_t>() : nullptr,
                                     state.n_seq};
}

}  // namespace

struct Qwen3DeviceSavedLayers {
  struct Activations {
    cuda::DeviceBuffer h1, q_raw, k_raw, qr, kr, v, att, lse, xmid, h2, gate, up, act;
    void allocate(cuda::DeviceAllocator& a, const Dims& d) {
      const size_t T = size_t(d.T);
      h1 = buffer<float>(a, T * size_t(d.C), "training activations (h1)");
      q_raw = buffer<float>(a, T * size_t(d.QD), "training activations (q)");
      k_raw = buffer<float>(a, T * size_t(d.KD), "training activations (k)");
      qr = buffer<float>(a, T * size_t(d.QD), "training activations (rotated q)");
      kr = buffer<float>(a, T * size_t(d.KD), "training activations (rotated k)");
      v = buffer<float>(a, T * size_t(d.KD), "training activations (v)");
      att = buffer<float>(a, T * size_t(d.QD), "training activations (attention)");
      lse = buffer<float>(a, T * size_t(d.NH), "training activations (log-sum-exp)");
      xmid = buffer<float>(a, T * size_t(d.C), "training activations (residual)");
      h2 = buffer<float>(a, T * size_t(d.C), "training activations (h2)");
      gate = buffer<float>(a, T * size_t(d.I), "training activations (gate)");
      up = buffer<float>(a, T * size_t(d.I), "training activations (up)");
      act = buffer<float>(a, T * size_t(d.I), "training activations (swiglu)");
    }
  };
  std::vector<Activations> layers;
};

Qwen3TrainCuda::Qwen3TrainCuda(const Qwen3Config& config, const Qwen3ParamLayout& layout,
                               std::shared_ptr<const cuda::CublasLtLibrary> library, cuda::DeviceAllocator& allocator,
                               cudaStream_t stream, cuda::GemmDtype precision, size_t saved_activation_bytes)
    : config_(config),
      layout_(layout),
      allocator_(allocator),
      stream_(stream),
      precision_(precision),
      saved_activation_bytes_(saved_activation_bytes),
      gemm_(library, allocator, stream, 256),
      backward_(library, allocator, stream),
      recompute_(std::make_shared<Qwen3DeviceSavedLayers>()) {
  if (precision != cuda::GemmDtype::F32 && precision != cuda::GemmDtype::Bf16) {
    throw cuda::CudaError("the device trainer computes in f32 or bf16, not " + std::string(cuda::gemm_dtype_name(precision)));
  }
  if (!cuda::attention_train_supports(config.num_attention_heads, config.num_key_value_heads, config.head_dim)) {
    throw cuda::CudaError("the device trainer's attention does not serve " + std::to_string(config.num_attention_heads) +
                          " query heads over " + std::to_string(config.num_key_value_heads) + " KV heads of " +
                          std::to_string(config.head_dim));
  }
  attention_mma_ = precision == cuda::GemmDtype::Bf16 && cuda::train_attention_uses_mma() &&
                   cuda::attention_train_mma_supports(config.num_attention_heads, config.num_key_value_heads, config.head_dim);
  recompute_->layers.resize(1);
}

Qwen3TrainCuda::~Qwen3TrainCuda() = default;

const uint16_t* Qwen3TrainCuda::to_bf16(cuda::ScratchBuffer& buffer, const float* x, size_t n) {
  uint16_t* out = buffer.reserve<uint16_t>(allocator_, n);
  cuda::f32_to_bf16(x, out, n, stream_);
  return out;
}

void Qwen3TrainCuda::linear(float* out, const float* inp, const Qwen3DeviceParams& params, size_t offset, int64_t M, int64_t N,
                            int64_t K) {
  if (precision_ == cuda::GemmDtype::Bf16) {
    const uint16_t* x = to_bf16(bf16_a_, inp, size_t(M * K));
    gemm_.run(out, x, nullptr, cuda::DeviceMatrix{params.bf16 + offset, cuda::GemmDtype::Bf16, N, K, nullptr}, M);
  } else {
    gemm_.run(out, inp, nullptr, cuda::DeviceMatrix{params.f32 + offset, cuda::GemmDtype::F32, N, K, nullptr}, M);
  }
}

void Qwen3TrainCuda::linear_backward(float* dinp, float* grads, const float* dout, const float* inp,
                                     const Qwen3DeviceParams& params, size_t offset, int64_t M, int64_t N, int64_t K) {
  if (precision_ == cuda::GemmDtype::Bf16) {
    const uint16_t* dy = to_bf16(bf16_a_, dout, size_t(M * N));
    const uint16_t* x = to_bf16(bf16_b_, inp, size_t(M * K));
    backward_.run(dinp, grads + offset, dy, x, params.bf16 + offset, M, N, K, cuda::GemmDtype::Bf16);
  } else {
    backward_.run(dinp, grads + offset, dout, inp, params.f32 + offset, M, N, K, cuda::GemmDtype::F32);
  }
}

void Qwen3TrainCuda::layer_forward(const Qwen3DeviceParams& params, const Qwen3ParamLayout::Layer& W,
                                   const Qwen3DeviceTrainState& state, const float* xin, float* xout,
                                   Qwen3DeviceSavedLayers& saved, size_t index) {
  const Dims d(config_, state.T);
  const float eps = config_.rms_norm_eps;
  const float* p = params.f32;
  Qwen3DeviceSavedLayers::Activations& a = saved.layers[index];
  const int32_t* rows = state.rows.get<int32_t>();
  cuda::rmsnorm_forward(floats(a.h1), xin, p + W.input_layernorm, d.T, d.C, eps, stream_);
  linear(floats(a.q_raw), floats(a.h1), params, W.q_proj, d.T, d.QD, d.C);
  linear(floats(a.k_raw), floats(a.h1), params, W.k_proj, d.T, d.KD, d.C);
  linear(floats(a.v), floats(a.h1), params, W.v_proj, d.T, d.KD, d.C);
  cuda::rmsnorm_forward(floats(a.qr), floats(a.q_raw), p + W.q_norm, d.T * d.NH, d.HD, eps, stream_);
  cuda::rmsnorm_forward(floats(a.kr), floats(a.k_raw), p + W.k_norm, d.T * d.NKV, d.HD, eps, stream_);
  cuda::rope_forward(floats(a.qr), rows, floats(state.rope_cos), floats(state.rope_sin), d.T, d.NH, d.HD, stream_);
  cuda::rope_forward(floats(a.kr), rows, floats(state.rope_cos), floats(state.rope_sin), d.T, d.NKV, d.HD, stream_);
  if (attention_mma_) {
    void* bf16_operands =
        attention_operands_.reserve<uint8_t>(allocator_, cuda::attention_train_mma_scratch_bytes(d.T, d.NH, d.NKV, d.HD));
    cuda::causal_attention_train_forward_mma(floats(a.att), floats(a.lse), floats(a.qr), floats(a.kr), floats(a.v),
                                             attention_shape(d, state), bf16_operands, stream_);
  } else {
    cuda::causal_attention_train_forward(floats(a.att), floats(a.lse), floats(a.qr), floats(a.kr), floats(a.v),
                                         attention_shape(d, state), stream_);
  }
  float* scratch = scratch_.reserve<float>(allocator_, size_t(d.T * d.C));
  linear(scratch, floats(a.att), params, W.o_proj, d.T, d.C, d.QD);
  copy(floats(a.xmid), xin, size_t(d.T * d.C), stream_);
  cuda::residual_forward(floats(a.xmid), scratch, d.T * d.C, stream_);
  cuda::rmsnorm_forward(floats(a.h2), floats(a.xmid), p + W.post_attention_layernorm, d.T, d.C, eps, stream_);
  linear(floats(a.gate), floats(a.h2), params, W.gate_proj, d.T, d.I, d.C);
  linear(floats(a.up), floats(a.h2), params, W.up_proj, d.T, d.I, d.C);
  cuda::swiglu_forward(floats(a.act), floats(a.gate), floats(a.up), d.T * d.I, stream_);
  linear(scratch, floats(a.act), params, W.down_proj, d.T, d.C, d.I);
  copy(xout, floats(a.xmid), size_t(d.T * d.C), stream_);
  cuda::residual_forward(xout, scratch, d.T * d.C, stream_);
}

void Qwen3TrainCuda::forward(const Qwen3DeviceParams& params, const Qwen3TrainBatch& batch, Qwen3DeviceTrainState& state) {
  check_qwen3_train_batch(config_, batch);
  if (precision_ == cuda::GemmDtype::Bf16 && params.bf16 == nullptr) {
    throw std::invalid_argument("the bf16 device trainer needs the parameters' bf16 copy");
  }
  const Dims d(config_, batch.T);
  const size_t TC = size_t(d.T * d.C);
  const int64_t L = config_.num_hidden_layers;
  state.T = d.T;
  state.n_seq = batch.n_seq;
  state.layer_inputs = buffer<float>(allocator_, size_t(L + 1) * TC, "training layer inputs");
  state.final_normed = buffer<float>(allocator_, TC, "training final norm");
  // The rope tables of each token's position, made on the host as the CPU makes them.
  const std::vector<int64_t> positions = qwen3_train_positions(batch);
  std::vector<float> cos(size_t(d.T * d.HD / 2)), sin(cos.size());
  cpu::rope_tables(cos.data(), sin.data(), positions.data(), d.T, d.HD, config_.rope_theta);
  std::vector<int32_t> rows(static_cast<size_t>(d.T));
  for (int64_t t = 0; t < d.T; t++) rows[size_t(t)] = int32_t(t);
  state.rope_cos = buffer<float>(allocator_, cos.size(), "rope tables");
  state.rope_sin = buffer<float>(allocator_, sin.size(), "rope tables");
  state.rows = buffer<int32_t>(allocator_, rows.size(), "rope rows");
  state.tokens = buffer<int32_t>(allocator_, size_t(d.T), "training tokens");
  state.seq_begins = buffer<int64_t>(allocator_, size_t(batch.n_seq + 1), "training sequences");
  state.has_parents = batch.seq_parent != nullptr;
  state.seq_parent = buffer<int64_t>(allocator_, size_t(batch.n_seq), "training sequence parents");
  const cuda::TokenGroups groups = cuda::group_positions_by_token(batch.tokens, d.T);
  state.groups = groups.count();
  state.group_tokens = buffer<int32_t>(allocator_, groups.tokens.size(), "embedding gradient groups");
  state.group_offsets = buffer<int32_t>(allocator_, groups.offsets.size(), "embedding gradient groups");
  state.group_positions = buffer<int32_t>(allocator_, groups.positions.size(), "embedding gradient groups");
  upload(state.rope_cos, cos.data(), cos.size(), stream_, "rope tables");
  upload(state.rope_sin, sin.data(), sin.size(), stream_, "rope tables");
  upload(state.rows, rows.data(), rows.size(), stream_, "rope rows");
  upload(state.tokens, batch.tokens, size_t(d.T), stream_, "training tokens");
  upload(state.seq_begins, batch.seq_begins, size_t(batch.n_seq + 1), stream_, "training sequences");
  if (state.has_parents) upload(state.seq_parent, batch.seq_parent, size_t(batch.n_seq), stream_, "training sequence parents");
  upload(state.group_tokens, groups.tokens.data(), groups.tokens.size(), stream_, "embedding gradient groups");
  upload(state.group_offsets, groups.offsets.data(), groups.offsets.size(), stream_, "embedding gradient groups");
  upload(state.group_positions, groups.positions.data(), groups.positions.size(), stream_, "embedding gradient groups");
  float* x0 = floats(state.layer_inputs);
  cuda::embedding_forward(x0, state.tokens.get<int32_t>(), params.f32 + layout_.embed, DType::F32, d.T, d.C, stream_);
  const bool save = size_t(L) * d.layer_floats() * sizeof(float) <= saved_activation_bytes_;
  if (save) {
    state.saved = std::make_shared<Qwen3DeviceSavedLayers>();
    state.saved->layers.resize(size_t(L));
  } else {
    state.saved.reset();
  }
  for (int64_t l = 0; l < L; l++) {
    Qwen3DeviceSavedLayers& into = save ? *state.saved : *recompute_;
    const size_t index = save ? size_t(l) : 0;
    into.layers[index].allocate(allocator_, d);
    layer_forward(params, layout_.layers[size_t(l)], state, x0 + size_t(l) * TC, x0 + size_t(l + 1) * TC, into, index);
  }
  cuda::rmsnorm_forward(floats(state.final_normed), x0 + size_t(L) * TC, params.f32 + layout_.norm, d.T, d.C,
                        config_.rms_norm_eps, stream_);
}

void Qwen3TrainCuda::backward(const Qwen3DeviceParams& params, float* grads, const Qwen3DeviceTrainState& state,
                              const float* d_final_normed, const std::function<void(int64_t layer)>& on_layer_queued) {
  const Dims d(config_, state.T);
  const size_t TC = size_t(d.T * d.C);
  const int64_t L = config_.num_hidden_layers;
  const float eps = config_.rms_norm_eps;
  const float* p = params.f32;
  const float* x0 = floats(state.layer_inputs);
  const int32_t* rows = state.rows.get<int32_t>();
  cuda::DeviceBuffer dx = buffer<float>(allocator_, TC, "training gradients (dx)");
  cuda::DeviceBuffer dxmid = buffer<float>(allocator_, TC, "training gradients (dxmid)");
  cuda::DeviceBuffer tmpC = buffer<float>(allocator_, TC, "training gradients (tmp)");
  cuda::DeviceBuffer dh = buffer<float>(allocator_, TC, "training gradients (dh)");
  cuda::DeviceBuffer d_act = buffer<float>(allocator_, size_t(d.T * d.I), "training gradients (swiglu)");
  cuda::DeviceBuffer dgate = buffer<float>(allocator_, size_t(d.T * d.I), "training gradients (gate)");
  cuda::DeviceBuffer dup = buffer<float>(allocator_, size_t(d.T * d.I), "training gradients (up)");
  cuda::DeviceBuffer datt = buffer<float>(allocator_, size_t(d.T * d.QD), "training gradients (attention)");
  cuda::DeviceBuffer dq = buffer<float>(allocator_, size_t(d.T * d.QD), "training gradients (q)");
  cuda::DeviceBuffer dq_raw = buffer<float>(allocator_, size_t(d.T * d.QD), "training gradients (raw q)");
  cuda::DeviceBuffer dk = buffer<float>(allocator_, size_t(d.T * d.KD), "training gradients (k)");
  cuda::DeviceBuffer dv = buffer<float>(allocator_, size_t(d.T * d.KD), "training gradients (v)");
  cuda::DeviceBuffer dk_raw = buffer<float>(allocator_, size_t(d.T * d.KD), "training gradients (raw k)");
  auto norm_backward = [&](float* dinp, size_t weight, const float* dout, const float* inp, int64_t N, int64_t C) {
    void* scratch = norm_scratch_.reserve<uint8_t>(allocator_, cuda::rmsnorm_backward_scratch_bytes(N, C));
    cuda::rmsnorm_backward(dinp, grads + weight, dout, inp, p + weight, N, C, eps, scratch, stream_);
  };
  norm_backward(floats(dx), layout_.norm, d_final_normed, x0 + size_t(L) * TC, d.T, d.C);
  const cuda::DevicePackedAttention shape = attention_shape(d, state);
  const auto attention_backward = attention_mma_ ? cuda::causal_attention_backward_mma : cuda::causal_attention_backward;
  void* attention_scratch = attention_scratch_.reserve<uint8_t>(
      allocator_, attention_mma_ ? cuda::attention_train_mma_scratch_bytes(d.T, d.NH, d.NKV, d.HD)
                                 : cuda::attention_backward_scratch_bytes(d.T, d.NH));
  cuda::DeviceBuffer recomputed_out = state.saved ? cuda::DeviceBuffer() : buffer<float>(allocator_, TC, "recomputed layer output");
  for (int64_t l = L - 1; l >= 0; l--) {
    const Qwen3ParamLayout::Layer& W = layout_.layers[size_t(l)];
    const float* xin = x0 + size_t(l) * TC;
    if (!state.saved) {
      recompute_->layers[0].allocate(allocator_, d);
      layer_forward(params, W, state, xin, floats(recomputed_out), *recompute_, 0);
    }
    const Qwen3DeviceSavedLayers::Activations& a = state.saved ? state.saved->layers[size_t(l)] : recompute_->layers[0];
    // MLP: xout = xmid + down(swiglu(gate(h2), up(h2))), h2 = norm(xmid).
    copy(floats(dxmid), floats(dx), TC, stream_);
    linear_backward(floats(d_act), grads, floats(dx), floats(a.act), params, W.down_proj, d.T, d.C, d.I);
    cuda::swiglu_backward(floats(dgate), floats(dup), floats(d_act), floats(a.gate), floats(a.up), d.T * d.I, stream_);
    linear_backward(floats(dh), grads, floats(dgate), floats(a.h2), params, W.gate_proj, d.T, d.I, d.C);
    linear_backward(floats(tmpC), grads, floats(dup), floats(a.h2), params, W.up_proj, d.T, d.I, d.C);
    cuda::residual_forward(floats(dh), floats(tmpC), d.T * d.C, stream_);
    norm_backward(floats(tmpC), W.post_attention_layernorm, floats(dh), floats(a.xmid), d.T, d.C);
    cuda::residual_forward(floats(dxmid), floats(tmpC), d.T * d.C, stream_);
    // Attention: xmid = xin + o_proj(attn(rope(qnorm(q)), rope(knorm(k)), v)), from h1 = norm(xin).
    linear_backward(floats(datt), grads, floats(dxmid), floats(a.att), params, W.o_proj, d.T, d.C, d.QD);
    attention_backward(floats(dq), floats(dk), floats(dv), floats(datt), floats(a.att), floats(a.lse), floats(a.qr), floats(a.kr),
                       floats(a.v), shape, attention_scratch, stream_);
    cuda::rope_backward(floats(dq), rows, floats(state.rope_cos), floats(state.rope_sin), d.T, d.NH, d.HD, stream_);
    cuda::rope_backward(floats(dk), rows, floats(state.rope_cos), floats(state.rope_sin), d.T, d.NKV, d.HD, stream_);
    norm_backward(floats(dq_raw), W.q_norm, floats(dq), floats(a.q_raw), d.T * d.NH, d.HD);
    norm_backward(floats(dk_raw), W.k_norm, floats(dk), floats(a.k_raw), d.T * d.NKV, d.HD);
    linear_backward(floats(dh), grads, floats(dq_raw), floats(a.h1), params, W.q_proj, d.T, d.QD, d.C);
    linear_backward(floats(tmpC), grads, floats(dk_raw), floats(a.h1), params, W.k_proj, d.T, d.KD, d.C);
    cuda::residual_forward(floats(dh), floats(tmpC), d.T * d.C, stream_);
    linear_backward(floats(tmpC), grads, floats(dv), floats(a.h1), params, W.v_proj, d.T, d.KD, d.C);
    cuda::residual_forward(floats(dh), floats(tmpC), d.T * d.C, stream_);
    norm_backward(floats(tmpC), W.input_layernorm, floats(dh), xin, d.T, d.C);
    if (on_layer_queued) on_layer_queued(l);
    copy(floats(dx), floats(dxmid), TC, stream_);
    cuda::residual_forward(floats(dx), floats(tmpC), d.T * d.C, stream_);
  }
  cuda::embedding_backward(grads + layout_.embed, floats(dx), state.group_tokens.get<int32_t>(), state.group_offsets.get<int32_t>(),
                           state.group_positions.get<int32_t>(), state.groups, d.C, stream_);
}

}  // namespace s3::model
