// test_engine_block_manager.cpp: the KV block free list hands out each block once, grows tables
// only as far as needed, refuses without side effects when short, and takes everything back; a
// block shared by two tables is free (and forgotten by the prefix cache) only when both let go.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "engine/block_manager.h"
#include "tests/test_framework.h"

using s3::engine::BlockManager;
using s3::engine::PrefixCache;

TEST(engine_block_manager_grows_tables_by_whole_blocks) {
  BlockManager blocks(8, 16);
  CHECK_EQ(blocks.blocks_for(0), 0);
  CHECK_EQ(blocks.blocks_for(16), 1);
  CHECK_EQ(blocks.blocks_for(17), 2);
  std::vector<int32_t> table;
  CHECK(blocks.grow(table, 1));
  CHECK_EQ(table.size(), size_t(1));
  CHECK(blocks.grow(table, 16));
  CHECK_EQ(table.size(), size_t(1));
  CHECK(blocks.grow(table, 40));
  CHECK_EQ(table.size(), size_t(3));
  CHECK_EQ(table[0], 0);  // lowest ids first
  CHECK_EQ(blocks.num_used(), 3);
  CHECK_EQ(blocks.num_free(), 5);
}

TEST(engine_block_manager_refuses_without_side_effects_and_recycles) {
  BlockManager blocks(4, 16);
  std::vector<int32_t> a, b;
  CHECK(blocks.grow(a, 48));
  CHECK(!blocks.grow(b, 32));
  CHECK(b.empty());
  CHECK_EQ(blocks.num_free(), 1);
  CHECK(blocks.grow(b, 16));
  std::set<int32_t> ids(a.begin(), a.end());
  ids.insert(b.begin(), b.end());
  CHECK_EQ(ids.size(), size_t(4));  // no block handed out twice
  blocks.free_all(a);
  CHECK(a.empty());
  CHECK_EQ(blocks.num_free(), 3);
  std::vector<int32_t> c;
  CHECK(blocks.grow(c, 48));
  std::vector<int32_t> sorted = c;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int32_t>({0, 1, 2}));
  blocks.free_all(b);
  blocks.free_all(c);
  CHECK_EQ(blocks.num_free(), 4);
}

TEST(engine_block_manager_rejects_bad_sizes) {
  CHECK_THROWS(std::invalid_argument, BlockManager(0, 16));
  CHECK_THROWS(std::invalid_argument, BlockManager(4, 0));
}

TEST(engine_block_manager_frees_a_shared_block_after_its_last_holder) {
  BlockManager blocks(4, 16);
  PrefixCache cache(16);
  blocks.set_prefix_cache(&cache);
  std::vector<int32_t> a, b;
  CHECK(blocks.grow(a, 32));
  std::vector<int32_t> tokens(16, 7);
  const uint64_t key = cache.key(0, 0, tokens.data());
  cache.insert(key, 0, 0, tokens.data(), a[0]);
  CHECK_EQ(cache.find(key, 0, 0, tokens.data()), a[0]);
  CHECK_EQ(cache.find(key, 0, 1, tokens.data()), -1);  // another weights version
  tokens[3] = 8;
  CHECK_EQ(cache.find(key, 0, 0, tokens.data()), -1);  // other tokens under the same key
  tokens[3] = 7;
  blocks.share(b, a[0]);
  CHECK_EQ(blocks.num_free(), 2);
  blocks.free_all(a);
  CHECK_EQ(blocks.num_free(), 3);  // a's second block; the shared one is b's still
  CHECK_EQ(cache.find(key, 0, 0, tokens.data()), b[0]);
  blocks.free_all(b);
  CHECK_EQ(blocks.num_free(), 4);
  CHECK_EQ(cache.find(key, 0, 0, tokens.data()), -1);
  CHECK_EQ(cache.size(), int64_t(0));
  CHECK_THROWS(std::logic_error, blocks.share(b, 0));  // a free block has no holder to share with
}
