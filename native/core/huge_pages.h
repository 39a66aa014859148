// huge_pages.h: asking the kernel to back large, randomly read buffers (the paged KV cache) with
// transparent huge pages. A decode step reads its sequences' KV blocks scattered over gigabytes,
// so with 4 KiB pages nearly every 16-position chunk costs a TLB miss and a page walk; 2 MiB pages
// remove most of them (docs/benchmarks.md, "KV cache on huge pages"). Advice only: where the
// kernel does not take it (not Linux, THP set to "never", no whole huge page in the range) the
// buffer works exactly the same on small pages.
#pragma once

#include <cstddef>
#include <vector>

namespace s3 {

// The size of the huge pages advised for (2 MiB on x86-64 and most arm64 kernels).
constexpr size_t kHugePageBytes = size_t(2) << 20;

// Advises MADV_HUGEPAGE for the whole huge pages inside [data, data + bytes); pages touched
// before the call keep their size. Returns whether the kernel took the advice for a non-empty range.
bool advise_huge_pages(void* data, size_t bytes);

// `buffer` resized to `count` copies of `value`, its storage allocated and advised before the
// first write, so the fill itself faults in huge pages where the kernel grants them.
template <typename T>
void assign_on_huge_pages(std::vector<T>& buffer, size_t count, const T& value) {
  std::vector<T>().swap(buffer);
  buffer.reserve(count);
  advise_huge_pages(buffer.data(), count * sizeof(T));
  buffer.assign(count, value);
}

}  // namespace s3
