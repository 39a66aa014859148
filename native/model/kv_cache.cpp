// The paged K/V cache; see kv_cache.h.
#include "model/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace s3::model {

KvCache::KvCache(const Qwen3Config& config, int64_t block_size, int64_t num_blocks)
    : layers_(config.num_hidden_layers),
      kv_heads_(config.num_key_value_heads),
      head_dim_(config.head_dim),
      block_size_(block_size),
      num_blocks_(num_blocks) {
  if (block_size <= 0 || block_size % cpu::kAttentionKeyChunk != 0) {
    throw std::invalid_argument("KV cache block size " + std::to_string(block_size) +
                                " is not a positive multiple of " + std::to_string(cpu::kAttentionKeyChunk) +
                                " (attention's key chunk)");
  }
  if (num_blocks <= 0) {
    throw std::invalid_argument("KV cache needs at least one block; got " + std::to_string(num_blocks));
  }
  const size_t floats = size_t(layers_ * num_blocks_ * kv_heads_ * block_size_ * head_dim_);
  keys_.assign(floats, 0.0f);
  values_.assign(floats, 0.0f);
}

size_t KvCache::block_offset(int64_t layer, int64_t block) const {
  return size_t(((layer * num_blocks_ + block) * kv_heads_) * block_size_ * head_dim_);
}

cpu::KvPages KvCache::pages(int64_t layer) const {
  return {keys_.data() + block_offset(layer, 0), values_.data() + block_offset(layer, 0), block_size_};
}

void KvCache::store(int64_t layer, const cpu::AttentionSequence* sequences, int64_t B, const float* k, const float* v) {
  const int64_t HD = head_dim_, NKV = kv_heads_;
  int64_t token = 0;
  for (int64_t b = 0; b < B; b++) {
    const cpu::AttentionSequence& seq = sequences[b];
    for (int64_t i = 0; i < seq.length; i++, token++) {
      const int64_t position = seq.start + i;
      const int64_t block = seq.block_table[position / block_size_];
      for (int64_t h = 0; h < NKV; h++) {
        const size_t dst = block_offset(layer, block) + size_t((h * block_size_ + position % block_size_) * HD);
        const size_t src = size_t((token * NKV + h) * HD);
        std::copy(k + src, k + src + HD, keys_.begin() + dst);
        std::copy(v + src, v + src + HD, values_.begin() + dst);
      }
    }
  }
}

}  // namespace s3::model
