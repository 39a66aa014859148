// The Qwen3 forward pass; see qwen3_forward.h. Row-wise steps (norms, RoPE, SwiGLU, residual adds)
// are split between threads by token; matmuls split output columns (q/k/v and gate/up each in one
// pass over the stacked weights) and attention splits
// (sequence, KV head, query tile) items. Every split is per row, so the thread count never
// changes a result.
#include "model/qwen3_forward.h"

#include <stdexcept>
#include <string>

#include "cpu/embedding.h"
#include "cpu/matmul.h"
#include "cpu/rmsnorm.h"
#include "cpu/rope.h"
#include "cpu/swiglu.h"

namespace s3::model {
namespace {

[[noreturn]] void refuse(const std::string& problem) { throw std::invalid_argument("qwen3_forward: " + problem); }

}  // namespace

int64_t validate_qwen3_batch(const Qwen3Config& config, const Qwen3Batch& batch, int64_t block_size, int64_t num_blocks) {
  int64_t T = 0;
  for (int64_t b = 0; b < batch.num_sequences; b++) {
    const cpu::AttentionSequence& seq = batch.sequences[b];
    const std::string name = "sequence " + std::to_string(b);
    if (seq.start < 0 || seq.length < 0) {
      refuse(name + " has start " + std::to_string(seq.start) + " and length " + std::to_string(seq.length) +
             "; both must be >= 0");
    }
    const int64_t offset = batch.rope_offsets != nullptr ? batch.rope_offsets[b] : 0;
    if (offset < 0) refuse(name + " has rope offset " + std::to_string(offset) + "; it must be >= 0");
    if (offset + seq.start + seq.length > config.max_position_embeddings) {
      refuse(name + " reaches rotary position " + std::to_string(offset + seq.start + seq.length - 1) +
             "; the model's max_position_embeddings is " + std::to_string(config.max_position_embeddings));
    }
    const int64_t end = seq.start + seq.length;
    if (end > config.max_position_embeddings) {
      refuse(name + " reaches position " + std::to_string(end - 1) + "; the model's max_position_embeddings is " +
             std::to_string(config.max_position_embeddings));
    }
    const int64_t blocks_needed = (end + block_size - 1) / block_size;
    if (seq.num_table_blocks < blocks_needed) {
      refuse(name + " has " + std::to_string(seq.num_table_blocks) + " blocks in its block table; positions up to " +
             std::to_string(end - 1) + " need " + std::to_string(blocks_needed));
    }
    for (int64_t i = 0; i < blocks_needed; i++) {
      if (seq.block_table[i] < 0 || seq.block_table[i] >= num_blocks) {
        refuse(name + " block table entry " + std::to_string(i) + " is " + std::to_string(seq.block_table[i]) +
               "; the cache has blocks [0, " + std::to_string(num_blocks) + ")");
      }
    }
    T += seq.length;
  }
  for (int64_t t = 0; t < T; t++) {
    if (batch.tokens[t] < 0 || batch.tokens[t] >= config.vocab_size) {
      refuse("token " + std::to_string(batch.tokens[t]) + " at packed index " + std::to_string(t) +
             " is outside the vocabulary [0, " + std::to_string(config.vocab_size) + ")");
    }
  }
  for (int64_t r = 0; r < batch.num_logit_rows; r++) {
    if (batch.logit_rows[r] < 0 || batch.logit_rows[r] >= T) {
      refuse("logit row " + std::to_string(r) + " asks for packed token " + std::to_string(batch.logit_rows[r]) +
             "; the batch has tokens [0, " + std::to_string(T) + ")");
    }
  }
  return T;
}

namespace {

// Returns T, after checking everything qwen3_forward promises to check.
int64_t validate(const Qwen3Config& config, const Qwen3Batch& batch, const KvCache& cache) {
  if (cache.layers() != config.num_hidden_layers || cache.kv_heads() != config.num_key_value_heads ||
      cache.head_dim() != config.head_dim) {
    refuse("the KV cache was made for another shape (layers " + std::to_string(cache.layers()) + ", KV heads " +
           std::to_string(cache.kv_heads()) + ", head_dim " + std::to_string(cache.head_dim()) + ")");
  }
  return validate_qwen3_batch(config, batch, cache.block_size(), cache.num_blocks());
}

// fn(begin, end) over token rows [0, T), split between the pool's threads.
template <typename Fn>
void for_rows(ThreadPool& pool, int64_t T, const Fn& fn) {
  pool.parallel_for(size_t(T), [&](size_t begin, size_t end, size_t) { fn(int64_t(begin), int64_t(end)); });
}

void attention_block(const Qwen3Config& c, const Qwen3LayerWeights& layer, int64_t l, const Qwen3Batch& batch,
                     int64_t T, KvCache& cache, Qwen3Workspace& ws, ThreadPool& pool) {
  const int64_t C = c.hidden_size, NH = c.num_attention_heads, NKV = c.num_key_value_heads, HD = c.head_dim;
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::rmsnorm_forward(&ws.normed[begin * C], &ws.x[begin * C], layer.input_layernorm, end - begin, C,
                         c.rms_norm_eps);
  });
  const cpu::MatmulOutput qkv[] = {{ws.q.data(), &layer.q_proj}, {ws.k.data(), &layer.k_proj}, {ws.v.data(), &layer.v_proj}};
  cpu::matmul_forward(qkv, 3, ws.normed.data(), T, pool);
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    const int64_t count = end - begin;
    float* q = &ws.q[begin * NH * HD];
    float* k = &ws.k[begin * NKV * HD];
    cpu::rmsnorm_forward(q, q, layer.q_norm, count * NH, HD, c.rms_norm_eps);
    cpu::rmsnorm_forward(k, k, layer.k_norm, count * NKV, HD, c.rms_norm_eps);
    cpu::rope_forward(q, &ws.rope_cos[begin * HD / 2], &ws.rope_sin[begin * HD / 2], count, NH, HD);
    cpu::rope_forward(k, &ws.rope_cos[begin * HD / 2], &ws.rope_sin[begin * HD / 2], count, NKV, HD);
  });
  cache.store(l, batch.sequences, batch.num_sequences, ws.k.data(), ws.v.data());
  cpu::attention_forward(ws.attn.data(), ws.q.data(), cache.pages(l), batch.sequences, batch.num_sequences, NH, NKV,
                         HD, pool);
  cpu::matmul_forward(ws.delta.data(), ws.attn.data(), layer.o_proj, T, pool);
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::residual_forward(&ws.x[begin * C], &ws.delta[begin * C], (end - begin) * C);
  });
}

void mlp_block(const Qwen3Config& c, const Qwen3LayerWeights& layer, int64_t T, Qwen3Workspace& ws, ThreadPool& pool) {
  const int64_t C = c.hidden_size, I = c.intermediate_size;
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::rmsnorm_forward(&ws.normed[begin * C], &ws.x[begin * C], layer.post_attention_layernorm, end - begin, C,
                         c.rms_norm_eps);
  });
  const cpu::MatmulOutput gate_up[] = {{ws.gate.data(), &layer.gate_proj}, {ws.up.data(), &layer.up_proj}};
  cpu::matmul_forward(gate_up, 2, ws.normed.data(), T, pool);
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::swiglu_forward(&ws.gate[begin * I], &ws.gate[begin * I], &ws.up[begin * I], (end - begin) * I);
  });
  cpu::matmul_forward(ws.delta.data(), ws.gate.data(), layer.down_proj, T, pool);
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::residual_forward(&ws.x[begin * C], &ws.delta[begin * C], (end - begin) * C);
  });
}

}  // namespace

void Qwen3Workspace::reserve(const Qwen3Config& c, int64_t T, int64_t R) {
  auto fit = [](auto& buffer, int64_t size) {
    if (buffer.size() < size_t(size)) buffer.resize(size_t(size));
  };
  fit(x, T * c.hidden_size);
  fit(normed, T * c.hidden_size);
  fit(q, T * c.q_dim());
  fit(attn, T * c.q_dim());
  fit(k, T * c.kv_dim());
  fit(v, T * c.kv_dim());
  fit(gate, T * c.intermediate_size);
  fit(up, T * c.intermediate_size);
  fit(delta, T * c.hidden_size);
  fit(rope_cos, T * c.head_dim / 2);
  fit(rope_sin, T * c.head_dim / 2);
  fit(positions, T);
  fit(final_rows, R * c.hidden_size);
}

void qwen3_forward(const Qwen3Weights& weights, const Qwen3Batch& batch, KvCache& cache, Qwen3Workspace& ws,
                   float* logits, ThreadPool& pool) {
  const Qwen3Config& c = weights.config();
  const int64_t T = validate(c, batch, cache);
  if (T == 0) return;
  const int64_t R = batch.num_logit_rows, C = c.hidden_size;
  ws.reserve(c, T, R);

  for (int64_t b = 0, t = 0; b < batch.num_sequences; b++) {
    const int64_t offset = batch.rope_offsets != nullptr ? batch.rope_offsets[b] : 0;
    for (int64_t i = 0; i < batch.sequences[b].length; i++) ws.positions[size_t(t++)] = offset + batch.sequences[b].start + i;
  }
  for_rows(pool, T, [&](int64_t begin, int64_t end) {
    cpu::rope_tables(&ws.rope_cos[begin * c.head_dim / 2], &ws.rope_sin[begin * c.head_dim / 2], &ws.positions[begin],
                     end - begin, c.head_dim, c.rope_theta);
    cpu::embedding_forward(&ws.x[begin * C], batch.tokens + begin, end - begin, weights.embed_tokens());
  });

  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const Qwen3LayerWeights& layer = weights.cpu_layers(pool)[size_t(l)];
    attention_block(c, layer, l, batch, T, cache, ws, pool);
    mlp_block(c, layer, T, ws, pool);
  }

  if (R == 0) return;
  for (int64_t r = 0; r < R; r++) {
    cpu::rmsnorm_forward(&ws.final_rows[r * C], &ws.x[batch.logit_rows[r] * C], weights.norm(), 1, C, c.rms_norm_eps);
  }
  cpu::matmul_forward(logits, ws.final_rows.data(), weights.cpu_lm_head(pool), R, pool);
}

}  // namespace s3::model
