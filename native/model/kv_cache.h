// kv_cache.h: the keys and values of every layer, in fixed-size blocks of positions that a
// sequence addresses through its block table (vLLM's paged layout). The engine's block manager
// hands out block ids; a contiguous per-sequence cache is the special case of one block per
// sequence with block_size = its capacity (block table {slot}). Storage is f32, bf16 (rounded to
// nearest even on store) or fp8 e4m3 (each (position, KV head) row of head_dim values quantized on
// store with its own f32 scale, cpu::quantize_fp8_row) in one layout, blocks × KV heads ×
// positions × head_dim, that attention reads in place; fp8 scales live in pools of their own,
// blocks × KV heads × positions (cpu::KvPages).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/huge_pages.h"

#include "core/kv_dtype.h"
#include "cpu/attention.h"
#include "model/qwen3_config.h"

namespace s3::model {

// "f32", "bf16" or "fp8" (the names the engine's kvCacheDtype option takes).
const char* kv_dtype_name(KvDtype dtype);
std::optional<KvDtype> parse_kv_dtype(std::string_view name);

class KvCache {
 public:
  // num_blocks blocks of block_size positions for every layer; block_size must be a positive
  // multiple of cpu::kAttentionKeyChunk (std::invalid_argument otherwise). Zero-filled.
  KvCache(const Qwen3Config& config, int64_t block_size, int64_t num_blocks, KvDtype dtype = KvDtype::F32);

  // Bytes one block takes over every layer, keys and values (fp8: row scales included).
  static int64_t bytes_per_block(const Qwen3Config& config, int64_t block_size, KvDtype dtype);

  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t layers() const { return layers_; }
  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  KvDtype dtype() const { return dtype_; }

  // Layer `layer`'s pages, as attention reads them.
  cpu::KvPages pages(int64_t layer) const;

  // Writes the new tokens' keys and values of layer `layer`: k, v: [T × NKV × HD] for the
  // T = Σ length new tokens of `sequences`, packed in order; token i of sequence b goes to
  // position start + i through b's block table. The caller has validated the block tables.
  void store(int64_t layer, const cpu::AttentionSequence* sequences, int64_t B, const float* k, const float* v);

 private:
  // Index of the first row (position of KV head 0) of `block` of `layer`, counting rows of
  // head_dim elements over every layer and block: its byte offset is that × head_dim × element size.
  size_t block_row(int64_t layer, int64_t block) const;

  int64_t layers_, kv_heads_, head_dim_, block_size_, num_blocks_;
  KvDtype dtype_;
  ZeroedPages keys_, values_;  // [L × num_blocks × NKV × block_size × HD] elements of dtype_
  std::vector<float> key_scales_, value_scales_;  // fp8 only: [L × num_blocks × NKV × block_size]
};

}  // namespace s3::model
