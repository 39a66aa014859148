// shared_prefixes.cpp: the implementation of train/shared_prefixes.h (see the header for the contract).
#include "train/shared_prefixes.h"

#include <algorithm>

namespace s3::train {

namespace {

struct Group {
  std::vector<int64_t> members;  // original sequence indices, in order
  int64_t prefix = 0;            // tokens all members share (and may share: none reaches a weighted row)
};

}  // namespace

SharedPrefixLayout share_prefixes(const std::vector<int32_t>& tokens, const std::vector<int64_t>& begins,
                                  const std::vector<int64_t>& first_weighted, int64_t min_prefix) {
  const int64_t n_seq = int64_t(begins.size()) - 1;
  auto length = [&](int64_t s) { return begins[size_t(s + 1)] - begins[size_t(s)]; };
  // A sequence may share its rows before its first weighted row, and keeps at least one of its own.
  auto cap = [&](int64_t s) { return std::max<int64_t>(0, std::min(first_weighted[size_t(s)], length(s) - 1)); };
  std::vector<Group> groups;
  for (int64_t s = 0; s < n_seq; s++) {
    int64_t best = -1, best_prefix = 0;
    for (size_t g = 0; g < groups.size(); g++) {
      const Group& group = groups[g];
      const int64_t rep = group.members.front();
      const int64_t limit = std::min(cap(s), group.prefix);
      int64_t common = 0;
      while (common < limit && tokens[size_t(begins[size_t(rep)] + common)] == tokens[size_t(begins[size_t(s)] + common)]) {
        common++;
      }
      const bool keeps_most = group.members.size() == 1 || common >= group.prefix - group.prefix / 8;
      if (common >= min_prefix && keeps_most && common > best_prefix) {
        best = int64_t(g);
        best_prefix = common;
      }
    }
    if (best >= 0) {
      groups[size_t(best)].members.push_back(s);
      groups[size_t(best)].prefix = best_prefix;
    } else {
      groups.push_back(Group{{s}, cap(s)});
    }
  }
  SharedPrefixLayout layout;
  layout.begins.push_back(0);
  auto append = [&](int64_t s, int64_t from, int64_t to, int64_t parent, bool prefix) {
    for (int64_t i = from; i < to; i++) {
      const int64_t row = begins[size_t(s)] + i;
      layout.tokens.push_back(tokens[size_t(row)]);
      layout.source.push_back(row);
      layout.prefix_row.push_back(prefix);
    }
    layout.begins.push_back(int64_t(layout.tokens.size()));
    layout.parent.push_back(parent);
  };
  for (const Group& group : groups) {
    if (group.members.size() < 2 || group.prefix < 1) {
      for (int64_t s : group.members) append(s, 0, length(s), -1, false);
      continue;
    }
    const int64_t parent = int64_t(layout.parent.size());
    append(group.members.front(), 0, group.prefix, -1, true);
    for (int64_t s : group.members) append(s, group.prefix, length(s), parent, false);
    layout.shared_rows += int64_t(group.members.size() - 1) * group.prefix;
  }
  return layout;
}

}  // namespace s3::train
