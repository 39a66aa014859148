// aligned_allocator.h: a std::allocator replacement whose storage starts on a cache line (64 bytes),
// for buffers that AMX tiles or full-width vector loads read row by row: std::vector's default
// storage is only 16-byte aligned, and a 64-byte tile row that straddles two cache lines costs a
// second line on every load (measured: with its input tiles 16 bytes past a line, one thread's amx
// matmul of 512 rows by 3,072 × 1,024 weights ran at 0.55x the speed).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace s3 {

constexpr std::size_t kCacheLineBytes = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLineBytes)));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(kCacheLineBytes)); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const {
    return false;
  }
};

// A vector whose data() is 64-byte aligned.
template <typename T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace s3
