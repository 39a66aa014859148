// prefix_cache.h: automatic prefix caching (as in vLLM): full KV blocks are found by their content,
// so an agent whose history starts with tokens another live agent has already processed (the system
// turn every agent of a team size shares) attaches those blocks instead of computing them again.
// A block's key chains the key of the block before it, the weights version that computed it and
// its block_size tokens; an entry is checked against all three on lookup, so a hit holds exactly
// the keys and values the sequence would compute itself (the forward pass gives a row the same
// bits whatever it is batched with: cpu/attention.h). Entries live as long as their block is held
// by some sequence; the block manager forgets a block's entry when it recycles the block.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace s3::engine {

class PrefixCache {
 public:
  explicit PrefixCache(int64_t block_size) : block_size_(block_size) {}

  // The key of the block of `tokens` (block_size of them) that follows the block keyed `parent`
  // (0 before the first block), computed by weights `version`.
  uint64_t key(uint64_t parent, int64_t version, const int32_t* tokens) const;
  // The cached block with this key and content, or −1.
  int32_t find(uint64_t key, uint64_t parent, int64_t version, const int32_t* tokens) const;
  // Remembers `block` under its key; a key already present keeps its first block.
  void insert(uint64_t key, uint64_t parent, int64_t version, const int32_t* tokens, int32_t block);
  // The block goes back to the free list: its entry (if any) is dropped.
  void forget(int32_t block);
  int64_t size() const { return int64_t(entries_.size()); }

 private:
  struct Entry {
    int32_t block;
    uint64_t parent;
    int64_t version;
    std::vector<int32_t> tokens;
  };
  int64_t block_size_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::unordered_map<int32_t, uint64_t> key_of_block_;
};

}  // namespace s3::engine
