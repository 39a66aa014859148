// huge_pages.h: asking the kernel to back large buffers with transparent huge pages. A decode step
// reads its sequences' KV blocks scattered over gigabytes, so with 4 KiB pages nearly every
// 16-position chunk costs a TLB miss and a page walk; 2 MiB pages remove most of them
// (docs/benchmarks.md, "KV cache on transparent huge pages"). The trainer's gigabytes of weights,
// gradients, moments and activations fault in with hundreds of times fewer faults ("The trainer's
// state on huge pages"). Advice only: where the kernel does not take it (not Linux, THP set to
// "never", no whole huge page in the range) the buffer works exactly the same on small pages.
#pragma once

#include <cstddef>
#include <cstdint>
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

// `buffer` resized to `count` as std::vector::resize does (its elements kept, new ones
// value-initialized); when that needs new storage, the storage is allocated and advised before its
// first write. For buffers that grow to their largest size once and are reused from then on.
template <typename T>
void resize_on_huge_pages(std::vector<T>& buffer, size_t count) {
  if (count <= buffer.capacity()) return buffer.resize(count);
  std::vector<T> grown;
  grown.reserve(count);
  advise_huge_pages(grown.data(), count * sizeof(T));
  grown.assign(buffer.begin(), buffer.end());
  grown.resize(count);
  buffer.swap(grown);
}

// A zero-filled byte buffer whose pages come from the kernel already zeroed, on first touch: an
// anonymous mapping (advised for huge pages) is never written at allocation, so a KV cache of a
// gigabyte costs nothing to create and only the pages sequences reach are ever faulted in (an
// engine started for a short evaluation used to spend ~2 s zeroing its whole cache). Elsewhere
// than POSIX, calloc. Move-only.
class ZeroedPages {
 public:
  ZeroedPages() = default;
  explicit ZeroedPages(size_t bytes);
  ~ZeroedPages();
  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  bool mapped_ = false;  // from mmap (else calloc)
};

}  // namespace s3
