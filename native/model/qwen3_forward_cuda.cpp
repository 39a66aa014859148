// The Qwen3 forward pass on a CUDA device; see qwen3_forward_cuda.h.
#include "model/qwen3_forward_cuda.h"

#include <algorithm>
#include <cstring>

#include "core/ops/fp8_block_scales.h"
#include "core/ops/kv_layout.h"
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

void Qwen3CudaForward::upload_batch(const Qwen3Batch& batch, int64_t T, int64_t block_size, int64_t num_blocks) {
  const Qwen3Config& c = config_;
  std::vector<int32_t> rope_positions(static_cast<size_t>(T)), positions(static_cast<size_t>(T)), table_offsets(static_cast<size_t>(T)), tables;
  std::vector<int64_t> kv_rows(static_cast<size_t>(T));
  int64_t t = 0;
  for (int64_t b = 0; b < batch.num_sequences; b++) {
    const cpu::AttentionSequence& seq = batch.sequences[b];
    const int64_t offset = batch.rope_offsets != nullptr ? batch.rope_offsets[b] : 0;
    const int64_t blocks = (seq.start + seq.length + block_size - 1) / block_size;
    const int32_t table_offset = int32_t(tables.size());
    tables.insert(tables.end(), seq.block_table, seq.block_table + blocks);
    for (int64_t i = 0; i < seq.length; i++, t++) {
      const int64_t p = seq.start + i;
      positions[size_t(t)] = int32_t(p);
      rope_positions[size_t(t)] = int32_t(offset + p);
      table_offsets[size_t(t)] = table_offset;
      // The layer-local row of KV head 0 (layer 0 of the layout), as kv_store takes it.
      kv_rows[size_t(t)] = ops::kv_row(0, ops::kv_block_of(seq.block_table, p, block_size), 0, p % block_size, num_blocks,
                                       c.num_key_value_heads, block_size);
    }
  }
  std::vector<int32_t> logit_rows(batch.logit_rows, batch.logit_rows + batch.num_logit_rows);
  cuda::AttentionTilePlan plan;
  if (attention_ == cuda::AttentionKernel::Tiled || attention_ == cuda::AttentionKernel::TiledMma) {
    plan = cuda::plan_attention_tiles(positions.data(), table_offsets.data(), T, c.num_attention_heads, c.num_key_value_heads, c.head_dim);
  }
  staging_.clear();
  const size_t tokens_at = stage(staging_, batch.tokens, size_t(T));
  const size_t rope_at = stage(staging_, rope_positions.data(), rope_positions.size());
  const size_t positions_at = stage(staging_, positions.data(), positions.size());
  const size_t offsets_at = stage(staging_, table_offsets.data(), table_offsets.size());
  const size_t tables_at = stage(staging_, tables.data(), tables.size());
  const size_t rows_at = stage(staging_, logit_rows.data(), logit_rows.size());
  const size_t kv_at = stage(staging_, kv_rows.data(), kv_rows.size());
  const size_t plan_at = stage(staging_, plan.items.data(), plan.items.size());
  uint8_t* device = meta_.reserve<uint8_t>(allocator_, staging_.size());
  // Synchronous from pageable memory, so staging_ can be reused at once.
  cuda::check(cudaMemcpyAsync(device, staging_.data(), staging_.size(), cudaMemcpyHostToDevice, stream_), "uploading the batch",
              {{"bytes", int64_t(staging_.size())}});
  cuda::check(cudaStreamSynchronize(stream_), "uploading the batch");
  tokens_ = reinterpret_cast<const int32_t*>(device + tokens_at);
  rope_positions_ = reinterpret_cast<const int32_t*>(device + rope_at);
  positions_ = reinterpret_cast<const int32_t*>(device + positions_at);
  table_offsets_ = reinterpret_cast<const int32_t*>(device + offsets_at);
  tables_ = reinterpret_cast<const int32_t*>(device + tables_at);
  logit_rows_ = reinterpret_cast<const int32_t*>(device + rows_at);
  kv_rows_ = reinterpret_cast<const int64_t*>(device + kv_at);
  attention_work_ = {reinterpret_cast<const int32_t*>(device + plan_at), plan.tile_items, plan.single_items};
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

const float* Qwen3CudaForward::forward(const Qwen3DeviceWeights& weights, const Qwen3Batch& batch, cuda::DeviceKvCache& cache) {
  const Qwen3Config& c = config_;
  const int64_t T = validate_qwen3_batch(c, batch, cache.block_size(), cache.num_blocks());
  const int64_t R = batch.num_logit_rows, C = c.hidden_size, NH = c.num_attention_heads, NKV = c.num_key_value_heads,
                HD = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  float* logits = logits_.reserve<float>(allocator_, size_t(std::max<int64_t>(output_rows(R), 1) * V));
  if (T == 0) return logits;
  upload_batch(batch, T, cache.block_size(), cache.num_blocks());
  const int64_t rows = output_rows(T);  // GEMM outputs may carry FP8's padding rows
  float* x = x_.reserve<float>(allocator_, size_t(T * C));
  float* normed = normed_.reserve<float>(allocator_, size_t(T * C));
  float* q = q_.reserve<float>(allocator_, size_t(rows * c.q_dim()));
  float* k = k_.reserve<float>(allocator_, size_t(rows * c.kv_dim()));
  float* v = v_.reserve<float>(allocator_, size_t(rows * c.kv_dim()));
  float* attn = attn_.reserve<float>(allocator_, size_t(T * c.q_dim()));
  float* gate = gate_.reserve<float>(allocator_, size_t(rows * I));
  float* up = up_.reserve<float>(allocator_, size_t(rows * I));
  float* delta = delta_.reserve<float>(allocator_, size_t(rows * C));
  float* scratch = attention_ == cuda::AttentionKernel::Reference
                       ? nullptr
                       : attention_scratch_.reserve<float>(allocator_, size_t(cuda::attention_scratch_floats(T, NH, HD)));
  const cuda::AttentionTokens tokens{positions_, table_offsets_, tables_, T};
  const float eps = c.rms_norm_eps;

  cuda::embedding_forward(x, tokens_, weights.embed_tokens(), weights.embed_dtype(), T, C, stream_);
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
    cuda::rope_forward(q, rope_positions_, rope_cos_.get<float>(), rope_sin_.get<float>(), T, NH, HD, stream_);
    cuda::rope_forward(k, rope_positions_, rope_cos_.get<float>(), rope_sin_.get<float>(), T, NKV, HD, stream_);
    cuda::kv_store(pages, k, v, kv_rows_, T, stream_);
    switch (attention_) {
      case cuda::AttentionKernel::Split: cuda::attention_forward(attn, q, pages, tokens, NH, scratch, stream_); break;
      case cuda::AttentionKernel::Tiled: cuda::attention_forward_tiled(attn, q, pages, tokens, attention_work_, NH, scratch, stream_); break;
      case cuda::AttentionKernel::TiledMma:
        cuda::attention_forward_tiled_mma(attn, q, pages, tokens, attention_work_, NH, scratch, stream_);
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
  float* final_rows = final_.reserve<float>(allocator_, size_t(R * C));
  cuda::gather_rows(final_rows, x, logit_rows_, R, C, stream_);
  cuda::rmsnorm_forward(final_rows, final_rows, weights.norm(), R, C, eps, stream_);
  float* const outs[] = {logits};
  const cuda::DeviceMatrix* const ws[] = {&weights.lm_head()};
  linear(outs, ws, 1, final_rows, R);
  return logits;
}

}  // namespace s3::model
