// block_manager.cpp: the free list and holder counts of KV cache blocks; see block_manager.h.
#include "engine/block_manager.h"

#include <stdexcept>
#include <string>

namespace s3::engine {

BlockManager::BlockManager(int64_t num_blocks, int64_t block_size) : num_blocks_(num_blocks), block_size_(block_size) {
  if (num_blocks <= 0 || num_blocks > INT32_MAX) throw std::invalid_argument("BlockManager: num_blocks must be in [1, 2^31), got " + std::to_string(num_blocks));
  if (block_size <= 0) throw std::invalid_argument("BlockManager: block_size must be positive, got " + std::to_string(block_size));
  free_.reserve(size_t(num_blocks));
  for (int64_t b = num_blocks - 1; b >= 0; b--) free_.push_back(int32_t(b));
  holders_.assign(size_t(num_blocks), 0);
}

bool BlockManager::grow(std::vector<int32_t>& table, int64_t positions) {
  const int64_t need = blocks_for(positions) - int64_t(table.size());
  if (need <= 0) return true;
  if (need > num_free()) return false;
  for (int64_t i = 0; i < need; i++) {
    table.push_back(free_.back());
    holders_[size_t(free_.back())] = 1;
    free_.pop_back();
  }
  return true;
}

void BlockManager::share(std::vector<int32_t>& table, int32_t block) {
  if (block < 0 || block >= num_blocks_ || holders_[size_t(block)] <= 0) {
    throw std::logic_error("BlockManager::share: block " + std::to_string(block) + " is not held by any table");
  }
  holders_[size_t(block)]++;
  table.push_back(block);
}

void BlockManager::free_all(std::vector<int32_t>& table) {
  // Freed in reverse so that a sequence that is preempted and recomputed gets its blocks back in
  // the same order.
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    if (--holders_[size_t(*it)] > 0) continue;
    if (prefix_cache_ != nullptr) prefix_cache_->forget(*it);
    free_.push_back(*it);
  }
  table.clear();
}

}  // namespace s3::engine
