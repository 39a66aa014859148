// The paged K/V cache; see kv_cache.h.
#include "model/kv_cache.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/huge_pages.h"
#include "core/ops/kv_layout.h"
#include "cpu/convert.h"

namespace s3::model {

const char* kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::F32:
      return "f32";
    case KvDtype::Bf16:
      return "bf16";
    case KvDtype::Fp8E4M3:
      return "fp8";
  }
  return "?";
}

std::optional<KvDtype> parse_kv_dtype(std::string_view name) {
  if (name == "f32") return KvDtype::F32;
  if (name == "bf16") return KvDtype::Bf16;
  if (name == "fp8") return KvDtype::Fp8E4M3;
  return std::nullopt;
}

KvCache::KvCache(const Qwen3Config& config, int64_t block_size, int64_t num_blocks, KvDtype dtype)
    : layers_(config.num_hidden_layers),
      kv_heads_(config.num_key_value_heads),
      head_dim_(config.head_dim),
      block_size_(block_size),
      num_blocks_(num_blocks),
      dtype_(dtype) {
  if (block_size <= 0 || block_size % cpu::kAttentionKeyChunk != 0) {
    throw std::invalid_argument("KV cache block size " + std::to_string(block_size) +
                                " is not a positive multiple of " + std::to_string(cpu::kAttentionKeyChunk) +
                                " (attention's key chunk)");
  }
  if (num_blocks <= 0) {
    throw std::invalid_argument("KV cache needs at least one block; got " + std::to_string(num_blocks));
  }
  const size_t bytes = size_t(layers_ * num_blocks_ * kv_heads_ * block_size_ * head_dim_ * cpu::kv_dtype_size(dtype_));
  // Huge pages: a decode step reads blocks scattered over the whole pool (core/huge_pages.h).
  // Zero-filled lazily by the kernel: all-zero bits are 0.0 in f32, bf16 and fp8 alike.
  keys_ = ZeroedPages(bytes);
  values_ = ZeroedPages(bytes);
  if (dtype_ == KvDtype::Fp8E4M3) {
    assign_on_huge_pages(key_scales_, size_t(layers_ * num_blocks_ * kv_heads_ * block_size_), 1.0f);
    assign_on_huge_pages(value_scales_, key_scales_.size(), 1.0f);
  }
}

int64_t KvCache::bytes_per_block(const Qwen3Config& c, int64_t block_size, KvDtype dtype) {
  const int64_t row_bytes = c.head_dim * cpu::kv_dtype_size(dtype) + cpu::kv_row_scale_bytes(dtype);
  return c.num_hidden_layers * c.num_key_value_heads * block_size * row_bytes * 2;
}

size_t KvCache::block_row(int64_t layer, int64_t block) const {
  return size_t(ops::kv_row(layer, block, 0, 0, num_blocks_, kv_heads_, block_size_));
}

cpu::KvPages KvCache::pages(int64_t layer) const {
  const size_t row = block_row(layer, 0), offset = row * size_t(head_dim_ * cpu::kv_dtype_size(dtype_));
  if (dtype_ != KvDtype::Fp8E4M3) return {keys_.data() + offset, values_.data() + offset, block_size_, dtype_};
  return {keys_.data() + offset, values_.data() + offset, block_size_, dtype_, key_scales_.data() + row,
          value_scales_.data() + row};
}

void KvCache::store(int64_t layer, const cpu::AttentionSequence* sequences, int64_t B, const float* k, const float* v) {
  const int64_t HD = head_dim_, NKV = kv_heads_;
  const size_t element = size_t(cpu::kv_dtype_size(dtype_)), row_bytes = size_t(HD) * element;
  const cpu::ConvertKernels& convert = cpu::convert_kernels();
  int64_t token = 0;
  for (int64_t b = 0; b < B; b++) {
    const cpu::AttentionSequence& seq = sequences[b];
    for (int64_t i = 0; i < seq.length; i++, token++) {
      const int64_t position = seq.start + i;
      const int64_t block = seq.block_table[position / block_size_];
      for (int64_t h = 0; h < NKV; h++) {
        const size_t row = block_row(layer, block) + size_t(h * block_size_ + position % block_size_);
        const size_t dst = row * row_bytes;
        const size_t src = size_t((token * NKV + h) * HD);
        switch (dtype_) {
          case KvDtype::F32:
            std::memcpy(keys_.data() + dst, k + src, row_bytes);
            std::memcpy(values_.data() + dst, v + src, row_bytes);
            break;
          case KvDtype::Bf16:
            convert.f32_to_bf16(k + src, reinterpret_cast<uint16_t*>(keys_.data() + dst), size_t(HD));
            convert.f32_to_bf16(v + src, reinterpret_cast<uint16_t*>(values_.data() + dst), size_t(HD));
            break;
          case KvDtype::Fp8E4M3:
            key_scales_[row] = cpu::quantize_fp8_row(k + src, HD, keys_.data() + dst);
            value_scales_[row] = cpu::quantize_fp8_row(v + src, HD, values_.data() + dst);
            break;
        }
      }
    }
  }
}

}  // namespace s3::model
