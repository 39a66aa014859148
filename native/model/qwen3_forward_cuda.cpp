// The Qwen3 forward pass on a CUDA device; see qwen3_forward_cuda.h.
#include "model/qwen3_forward_cuda.h"

#include <algorithm>
#include <cstring>

#include "core/ops/fp8_block_scales.h"
#include "cpu/rope.h"
#include "cuda/check.h"
#include "cuda/dtype_kernels.h"
#include "cuda/embedding.h"
#include "cuda/fp8_activations.h"
#include "cuda/rmsnorm.h"
#include "cuda/rope.h"
#include "cuda/swiglu.h"

namespace s3::model {
namespace {

// Rows a GEMM of T input rows writes (FP8 pads them to a multiple of 4).
int64_t output_rows(int64_t T) { return ops::fp8_activation_rows(T); }

// Appends `count` values to the staging bytes at an 8-byte boundary; returns their offset.
template <typename T>
size_t stage(std::vector<uint8_t>& staging, const T* values, size_t count) {
  const size_t offset = (staging.size() + 7) / 8 * 8;
  staging.resize(offset + count * sizeof(T));
  if (count > 0) std::memcpy(staging.data() + offset, values, count * sizeof(T));
  return offset;
}

}  // namespace

Qwen3CudaForward::Qwen3CudaForward(const Qwen3Config& config, cuda::DeviceAllocator& allocator, cudaStream_t stream,
                                   cuda::Gemm& gemm, cuda::AttentionKernel attention)
    : config_(config),
      allocator_(allocator),
      stream_(stream),
      gemm_(gemm),
      attention_(cuda::attention_forward_supports(config.num_attention_heads, config.num_key_value_heads, config.head_dim)
                     ? attention
                     : cuda::AttentionKernel::Reference) {
  // RoPE tables of every position, made by the CPU's function so rotations match it bit for bit.
  const int64_t P = config.max_position_embeddings, half = config.head_dim / 2;
  std::vector<int64_t> positions(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; p++) positions[size_t(p)] = p;
  std::vector<float> cos(size_t(P * half)), sin(size_t(P * half));
  cpu::rope_tables(cos.data(), sin.data(), positions.data(), P, config.head_dim, config.rope_theta);
  rope_cos_ = cuda::DeviceBuffer(allocator, cos.size() * sizeof(float), "the RoPE tables");
  rope_sin_ = cuda::DeviceBuffer(allocator, sin.size() * sizeof(float), "the RoPE tables");
  cuda::check(cudaMemcpy(rope_cos_.get(), cos.data(), cos.size() * sizeof(float), cudaMemcpyHostToDevice), "uploading the RoPE tables");
  cuda::check(cudaMemcpy(rope_sin_.get(), sin.data(), sin.size() * sizeof(float), cudaMemcpyHostToDevice), "uploading the RoPE tables");
}

std::string Qwen3CudaForward::attention_name() const {
  switch (attention_) {
    case cuda::AttentionKernel::Split: return "cuda split-KV paged attention";
    case cuda::AttentionKernel::Tiled: return "cuda tiled paged attention";
    case cuda::AttentionKernel::TiledMma:
      return cuda::attention_mma_serves(config_.head_dim, KvDtype::Bf16) ? "cuda tiled paged attention, bf16 tensor cores for bf16 and fp8 caches"
                                                                         : "cuda tiled paged attention";
    case cuda::AttentionKernel::Reference: break;
  }
  return "cuda reference attention (double)";
}

size_t Qwen3CudaForward::step_bytes(int64_t T, int64_t R, int64_t table_entries, int64_t plan_items) {
  // upload()'s layout: five int32 arrays of T or R entries and one int64 array of T, each from an
  // 8-byte boundary, then the plan's items (3 int32 each), then the tables.
  const auto aligned = [](size_t bytes) { return (bytes + 7) / 8 * 8; };
  return 4 * aligned(size_t(T) * sizeof(int32_t)) + aligned(size_t(R) * sizeof(int32_t)) + aligned(size_t(T) * sizeof(int64_t)) +
         aligned(size_t(3 * plan_items) * sizeof(int32_t)) + aligned(size_t(table_entries) * sizeof(int32_t));
}

Qwen3DeviceStep Qwen3CudaForward::upload(const Qwen3StepBookkeeping& step, int64_t plan_items) {
  const Qwen3Config& c = config_;
  const int64_t T = int64_t(step.tokens.size());
  cuda::AttentionTilePlan plan;
  if (attention_ == cuda::AttentionKernel::Tiled || attention_ == cuda::AttentionKernel::TiledMma) {
    plan = cuda::plan_attention_tiles(step.positions.data(), step.table_offsets.data(), T, c.num_attention_heads, c.num_key_value_heads,
                                      c.head_dim);
    if (plan_items > 0) cuda::pad_attention_plan(plan, plan_items);
  }
  // The arrays of T or R entries first, then the plan (of a fixed size where padded), so steps of the
  // same T, R and padded plan put them at the same addresses; the tables, whose length varies, last.
  staging_.clear();
  const size_t tokens_at = stage(staging_, step.tokens.data(), step.tokens.size());
  const size_t rope_at = stage(staging_, step.rope_positions.data(), step.rope_positions.size());
  const size_t positions_at = stage(staging_, step.positions.data(), step.positions.size());
  const size_t offsets_at = stage(staging_, step.table_offsets.data(), step.table_offsets.size());
  const size_t rows_at = stage(staging_, step.logit_rows.data(), step.logit_rows.size());
  const size_t kv_at = stage(staging_, step.kv_rows.data(), step.kv_rows.size());
  const size_t plan_at = stage(staging_, plan.items.data(), plan.items.size());
  const size_t tables_at = stage(staging_, step.tables.data(), step.tables.size());
  uint8_t* device = meta_.reserve<uint8_t>(allocator_, staging_.size());
  // Synchronous from pageable memory, so staging_ can be reused at once.
  cuda::check(cudaMemcpyAsync(device, staging_.data(), staging_.size(), cudaMemcpyHostToDevice, stream_), "uploading the batch",
              {{"bytes", int64_t(staging_.size())}});
  cuda::check(cudaStreamSynchronize(stream_), "uploading the batch");
  Qwen3DeviceStep d;
  d.tokens = reinterpret_cast<const int32_t*>(device + tokens_at);
  d.rope_positions = reinterpret_cast<const int32_t*>(device + rope_at);
  d.positions = reinterpret_cast<const int32_t*>(device + positions_at);
  d.table_offsets = reinterpret_cast<const int32_t*>(device + offsets_at);
  d.logit_rows = reinterpret_cast<const int32_t*>(device + rows_at);
  d.kv_rows = reinterpret_cast<const int64_t*>(device + kv_at);
  d.tables = reinterpret_cast<const int32_t*>(device + tables_at);
  d.attention_work = {reinterpret_cast<const int32_t*>(device + plan_at), plan.tile_items, plan.single_items};
  d.T = T;
  d.R = int64_t(step.logit_rows.size());
  return d;
}

Qwen3CudaForward::GemmInput Qwen3CudaForward::prepare(const float* x, int64_t T, int64_t K, cuda::GemmDtype dtype) {
  switch (dtype) {
    case cuda::GemmDtype::F32:
      return {x, nullptr};
    case cuda::GemmDtype::Bf16: {
      uint16_t* bf16 = input_.reserve<uint16_t>(allocator_, size_t(T * K));
      cuda::f32_to_bf16(x, bf16, size_t(T * K), stream_);
      cuda::check_launch("f32_to_bf16 (GEMM input)", {{"T", T}, {"K", K}});
      return {bf16, nullptr};
    }
    case cuda::GemmDtype::Fp8: {
      const int64_t rows = ops::fp8_activation_rows(T);
      uint8_t* bytes = input_.reserve<uint8_t>(allocator_, size_t(rows * K));
      float* scales = input_scales_.reserve<float>(allocator_, size_t(rows * ops::fp8_blocks(K)));
      cuda::quantize_fp8_activations(bytes, scales, x, T, K, stream_);
      return {bytes, scales};
    }
  }
  return {x, nullptr};
}

void Qwen3CudaForward::linear(float* const* outs, const cuda::DeviceMatrix* const* ws, int count, const float* x, int64_t T) {
  bool done[8] = {};
  for (int i = 0; i < count; i++) {
    if (done[i]) continue;
    const GemmInput in = prepare(x, T, ws[i]->cols, ws[i]->dtype);
    for (int j = i; j < count; j++) {
      if (done[j] || ws[j]->dtype != ws[i]->dtype) continue;
      gemm_.run(outs[j], in.data, in.scales, *ws[j], T);
      done[j] = true;
    }
  }
}

Qwen3CudaForward::Activations Qwen3CudaForward::activations(int64_t T, int64_t R) {
  const Qwen3Config& c = config_;
  const int64_t rows = output_rows(T);  // GEMM outputs may carry FP8's padding rows
  Activations a;
  a.logits = logits_.reserve<float>(allocator_, size_t(std::max<int64_t>(output_rows(R), 1) * c.vocab_size));
  a.x = x_.reserve<float>(allocator_, size_t(T * c.hidden_size));
  a.normed = normed_.reserve<float>(allocator_, size_t(T * c.hidden_size));
  a.q = q_.reserve<float>(allocator_, size_t(rows * c.q_dim()));
  a.k = k_.reserve<float>(allocator_, size_t(rows * c.kv_dim()));
  a.v = v_.reserve<float>(allocator_, size_t(rows * c.kv_dim()));
  a.attn = attn_.reserve<float>(allocator_, size_t(T * c.q_dim()));
  a.gate = gate_.reserve<float>(allocator_, size_t(rows * c.intermediate_size));
  a.up = up_.reserve<float>(allocator_, size_t(rows * c.intermediate_size));
  a.delta = delta_.reserve<float>(allocator_, size_t(rows * c.hidden_size));
  a.scratch = attention_ == cuda::AttentionKernel::Reference
                  ? nullptr
                  : attention_scratch_.reserve<float>(allocator_, size_t(cuda::attention_scratch_floats(T, c.num_attention_heads, c.head_dim)));
  a.final_rows = final_.reserve<float>(allocator_, size_t(std::max<int64_t>(R, 1) * c.hidden_size));
  return a;
}

void Qwen3CudaForward::reserve(int64_t T, int64_t R, int64_t table_entries, int64_t plan_items) {
  const Qwen3Config& c = config_;
  activations(T, R);
  // prepare()'s GEMM inputs: bf16 or FP8 copies of up to max(T, R) rows of the widest input.
  const int64_t K = std::max({c.hidden_size, c.q_dim(), c.intermediate_size}), M = std::max(T, R);
  input_.reserve<uint8_t>(allocator_, size_t(std::max(M * K * int64_t(sizeof(uint16_t)), ops::fp8_activation_rows(M) * K)));
  input_scales_.reserve<float>(allocator_, size_t(ops::fp8_activation_rows(M) * ops::fp8_blocks(K)));
  meta_.reserve<uint8_t>(allocator_, step_bytes(T, R, table_entries, plan_items));
}

const float* Qwen3CudaForward::forward(const Qwen3DeviceWeights& weights, const Qwen3Batch& batch, cuda::DeviceKvCache& cache) {
  const int64_t T = validate_qwen3_batch(config_, batch, cache.block_size(), cache.num_blocks());
  if (T == 0) return logits_.reserve<float>(allocator_, size_t(std::max<int64_t>(output_rows(batch.num_logit_rows), 1) * config_.vocab_size));
  return enqueue(weights, upload(qwen3_step_bookkeeping(batch, T, config_.num_key_value_heads, cache.block_size(), cache.num_blocks())),
                 cache);
}

const float* Qwen3CudaForward::enqueue(const Qwen3DeviceWeights& weights, const Qwen3DeviceStep& step, cuda::DeviceKvCache& cache) {
  const Qwen3Config& c = config_;
  const int64_t T = step.T, R = step.R, C = c.hidden_size, NH = c.num_attention_heads, NKV = c.num_key_value_heads,
                HD = c.head_dim, I = c.intermediate_size;
  const Activations a = activations(T, R);
  float *x = a.x, *normed = a.normed, *q = a.q, *k = a.k, *v = a.v, *attn = a.attn, *gate = a.gate, *up = a.up, *delta = a.delta,
        *scratch = a.scratch, *logits = a.logits;
  const cuda::AttentionTokens tokens{step.positions, step.table_offsets, step.tables, T};
  const float eps = c.rms_norm_eps;

  cuda::embedding_forward(x, step.tokens, weights.embed_tokens(), weights.embed_dtype(), T, C, stream_);
  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const Qwen3DeviceLayer& layer = weights.layers()[size_t(l)];
    const cuda::DeviceKvPages pages = cache.pages(l);
    cuda::rmsnorm_forward(normed, x, layer.input_layernorm, T, C, eps, stream_);
    {
      float* const outs[] = {q, k, v};
      const cuda::DeviceMatrix* const ws[] = {&layer.q_proj, &layer.k_proj, &layer.v_proj};
      linear(outs, ws, 3, normed, T);
    }
    cuda::rmsnorm_forward(q, q, layer.q_norm, T * NH, HD, eps, stream_);
    cuda::rmsnorm_forward(k, k, layer.k_norm, T * NKV, HD, eps, stream_);
    cuda::rope_forward(q, step.rope_positions, rope_cos_.get<float>(), rope_sin_.get<float>(), T, NH, HD, stream_);
    cuda::rope_forward(k, step.rope_positions, rope_cos_.get<float>(), rope_sin_.get<float>(), T, NKV, HD, stream_);
    cuda::kv_store(pages, k, v, step.kv_rows, T, stream_);
    switch (attention_) {
      case cuda::AttentionKernel::Split: cuda::attention_forward(attn, q, pages, tokens, NH, scratch, stream_); break;
      case cuda::AttentionKernel::Tiled: cuda::attention_forward_tiled(attn, q, pages, tokens, step.attention_work, NH, scratch, stream_); break;
      case cuda::AttentionKernel::TiledMma:
        cuda::attention_forward_tiled_mma(attn, q, pages, tokens, step.attention_work, NH, scratch, stream_);
        break;
      case cuda::AttentionKernel::Reference: cuda::attention_reference(attn, q, pages, tokens, NH, stream_); break;
    }
    {
      float* const outs[] = {delta};
      const cuda::DeviceMatrix* const ws[] = {&layer.o_proj};
      linear(outs, ws, 1, attn, T);
    }
    cuda::residual_forward(x, delta, T * C, stream_);
    cuda::rmsnorm_forward(normed, x, layer.post_attention_layernorm, T, C, eps, stream_);
    {
      float* const outs[] = {gate, up};
      const cuda::DeviceMatrix* const ws[] = {&layer.gate_proj, &layer.up_proj};
      linear(outs, ws, 2, normed, T);
    }
    cuda::swiglu_forward(gate, gate, up, T * I, stream_);
    {
      float* const outs[] = {delta};
      const cuda::DeviceMatrix* const ws[] = {&layer.down_proj};
      linear(outs, ws, 1, gate, T);
    }
    cuda::residual_forward(x, delta, T * C, stream_);
  }
  if (R == 0) return logits;
  float* final_rows = a.final_rows;
  cuda::gather_rows(final_rows, x, step.logit_rows, R, C, stream_);
  cuda::rmsnorm_forward(final_rows, final_rows, weights.norm(), R, C, eps, stream_);
  float* const outs[] = {logits};
  const cuda::DeviceMatrix* const ws[] = {&weights.lm_head()};
  linear(outs, ws, 1, final_rows, R);
  return logits;
}

}  // namespace s3::model
