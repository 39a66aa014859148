// grow_only.h: scratch vectors that only grow. std::vector::resize value-initializes (zero-fills)
// whatever it adds, so a scratch buffer resized down for a small shape and up again for a large
// one is zero-filled again each time; one that only grows is filled once, when its pages are first
// touched. For buffers whose every value a call reads it writes first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace s3 {

// `v` holds at least n values: grown when short, never shrunk.
template <typename Vector>
void hold_at_least(Vector& v, int64_t n) {
  if (v.size() < size_t(n)) v.resize(size_t(n));
}

}  // namespace s3
