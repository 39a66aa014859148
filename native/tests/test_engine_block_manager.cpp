// test_engine_block_manager.cpp: the KV block free list hands out each block once, grows tables
// only as far as needed, refuses without side effects when short, and takes everything back.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "engine/block_manager.h"
#include "tests/test_framework.h"

using s3::engine::BlockManager;

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
