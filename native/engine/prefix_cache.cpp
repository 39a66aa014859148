// prefix_cache.cpp: the content-addressed block registry; see prefix_cache.h.
#include "engine/prefix_cache.h"

#include <algorithm>

namespace s3::engine {

namespace {

// splitmix64's finalizer: a well-mixed 64-bit step for the key chain.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t PrefixCache::key(uint64_t parent, int64_t version, const int32_t* tokens) const {
  uint64_t h = mix(parent ^ mix(uint64_t(version)));
  for (int64_t i = 0; i < block_size_; i++) h = mix(h ^ uint64_t(uint32_t(tokens[i])));
  return h == 0 ? 1 : h;  // 0 stands for "no parent"
}

int32_t PrefixCache::find(uint64_t key, uint64_t parent, int64_t version, const int32_t* tokens) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return -1;
  const Entry& e = it->second;
  if (e.parent != parent || e.version != version || !std::equal(e.tokens.begin(), e.tokens.end(), tokens)) return -1;
  return e.block;
}

void PrefixCache::insert(uint64_t key, uint64_t parent, int64_t version, const int32_t* tokens, int32_t block) {
  if (entries_.count(key) > 0 || key_of_block_.count(block) > 0) return;
  entries_.emplace(key, Entry{block, parent, version, std::vector<int32_t>(tokens, tokens + block_size_)});
  key_of_block_.emplace(block, key);
}

void PrefixCache::forget(int32_t block) {
  const auto it = key_of_block_.find(block);
  if (it == key_of_block_.end()) return;
  entries_.erase(it->second);
  key_of_block_.erase(it);
}

}  // namespace s3::engine
