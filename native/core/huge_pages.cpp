// huge_pages.cpp: the implementation of core/huge_pages.h (madvise on Linux, nothing elsewhere).
#include "core/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
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

}  // namespace s3
