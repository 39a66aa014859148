// huge_pages.cpp: the implementation of core/huge_pages.h (madvise on Linux, nothing elsewhere).
#include "core/huge_pages.h"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

namespace s3 {

bool advise_huge_pages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~uintptr_t(kHugePageBytes - 1);
  if (data == nullptr || end <= begin) return false;
  return madvise(reinterpret_cast<void*>(begin), size_t(end - begin), MADV_HUGEPAGE) == 0;
#else
  (void)data;
  (void)bytes;
  return false;
#endif
}

ZeroedPages::ZeroedPages(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) {
    data_ = static_cast<uint8_t*>(p);
    mapped_ = true;
    advise_huge_pages(data_, bytes);
    return;
  }
#endif
  data_ = static_cast<uint8_t*>(std::calloc(bytes, 1));
  if (data_ == nullptr) throw std::bad_alloc();
}

ZeroedPages::~ZeroedPages() { release(); }

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)), mapped_(other.mapped_) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = other.mapped_;
  }
  return *this;
}

void ZeroedPages::release() {
  if (data_ == nullptr) return;
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
  if (mapped_) {
    munmap(data_, bytes_);
    data_ = nullptr;
    return;
  }
#endif
  std::free(data_);
  data_ = nullptr;
}

}  // namespace s3
