// block_manager.h: hands out the KV cache's fixed-size blocks (model/kv_cache.h) to sequences from
// a free list. It only counts and recycles ids; which sequence holds which blocks is the
// sequence's block table, and who must give blocks back under pressure is the scheduler's call.
// A block may sit in several tables (a prefix shared through engine/prefix_cache.h): it counts
// its holders and returns to the free list when the last one lets go.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/prefix_cache.h"

namespace s3::engine {

class BlockManager {
 public:
  // num_blocks blocks of block_size positions each; both must be positive (std::invalid_argument).
  BlockManager(int64_t num_blocks, int64_t block_size);

  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_free() const { return int64_t(free_.size()); }
  int64_t num_used() const { return num_blocks_ - num_free(); }

  // Blocks a table needs to cover `positions` positions.
  int64_t blocks_for(int64_t positions) const { return (positions + block_size_ - 1) / block_size_; }

  // Grows `table` to cover `positions` positions. Returns false, changing nothing, when the free
  // list is too short.
  bool grow(std::vector<int32_t>& table, int64_t positions);
  // Appends a block another table holds to `table` (one more holder).
  void share(std::vector<int32_t>& table, int32_t block);
  // Lets go of every block of `table` and empties it; blocks without holders are free again.
  void free_all(std::vector<int32_t>& table);
  // Told about each block that goes back to the free list (may be null).
  void set_prefix_cache(PrefixCache* cache) { prefix_cache_ = cache; }

 private:
  int64_t num_blocks_, block_size_;
  // Lowest ids are handed out first (popped from the back), so a fresh engine's layout is the
  // same every run.
  std::vector<int32_t> free_;
  std::vector<int32_t> holders_;  // per block: how many tables hold it
  PrefixCache* prefix_cache_ = nullptr;
};

}  // namespace s3::engine
