// The tiled attention's work plan (host code); see attention_tiled.h.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/attention_tiled.h"

namespace s3::cuda {

AttentionTilePlan plan_attention_tiles(const int32_t* position, const int32_t* table_offset, int64_t T, int64_t NH,
                                       int64_t NKV, int64_t HD, int64_t min_tile_rows) {
  if (!attention_forward_supports(NH, NKV, HD)) {
    throw std::invalid_argument("plan_attention_tiles: " + std::to_string(NH) + " heads over " + std::to_string(NKV) +
                                " KV heads of head_dim " + std::to_string(HD) + " are not served");
  }
  const int64_t G = NH / NKV, tokens_per_tile = attention_tiled_rows(HD) / G;
  struct Item {
    int32_t first, count, split, keys;  // keys: positions the split covers for the item's last token
  };
  std::vector<Item> tiles, singles;
  const auto add = [](std::vector<Item>& out, int64_t first, int64_t count, int64_t last_position) {
    const int64_t length = attention_split_positions(last_position);
    for (int64_t split = 0; split * length <= last_position; split++) {
      const int64_t keys = std::min(length, last_position + 1 - split * length);
      out.push_back({int32_t(first), int32_t(count), int32_t(split), int32_t(keys)});
    }
  };
  for (int64_t t = 0; t < T;) {
    if (position[t] < 0) throw std::invalid_argument("plan_attention_tiles: token " + std::to_string(t) + " has a negative position");
    const int64_t length = attention_split_positions(position[t]);
    int64_t n = 1;
    while (t + n < T && n < tokens_per_tile && table_offset[t + n] == table_offset[t] && position[t + n] == position[t + n - 1] + 1 &&
           attention_split_positions(position[t + n]) == length) {
      n++;
    }
    if (n * G >= min_tile_rows) {
      add(tiles, t, n, position[t + n - 1]);
    } else {
      for (int64_t u = t; u < t + n; u++) add(singles, u, 1, position[u]);
    }
    t += n;
  }
  // Longest work first, ties in token order: the order of blocks never changes a row's bits.
  const auto longest_first = [](const Item& a, const Item& b) { return a.keys > b.keys; };
  std::stable_sort(tiles.begin(), tiles.end(), longest_first);
  std::stable_sort(singles.begin(), singles.end(), longest_first);
  AttentionTilePlan plan;
  plan.tile_items = int64_t(tiles.size());
  plan.single_items = int64_t(singles.size());
  plan.items.reserve(size_t(3 * (plan.tile_items + plan.single_items)));
  for (const std::vector<Item>* list : {&tiles, &singles}) {
    for (const Item& item : *list) plan.items.insert(plan.items.end(), {item.first, item.count, item.split});
  }
  return plan;
}

void pad_attention_plan(AttentionTilePlan& plan, int64_t single_items) {
  if (plan.tile_items != 0) {
    throw std::invalid_argument("pad_attention_plan: the plan has " + std::to_string(plan.tile_items) +
                                " multi-row items; only a decode step's plan (single-token items) is padded");
  }
  if (plan.single_items > single_items) {
    throw std::invalid_argument("pad_attention_plan: " + std::to_string(plan.single_items) + " items planned, more than the " +
                                std::to_string(single_items) + " padded to");
  }
  plan.items.resize(size_t(3 * single_items), 0);  // (first 0, count 0, split 0): padding
  plan.single_items = single_items;
}

}  // namespace s3::cuda
