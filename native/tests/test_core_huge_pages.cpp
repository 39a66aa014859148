// Huge-page advice (core/huge_pages.h): refused for ranges without a whole 2 MiB page, taken for
// one that holds some where the kernel has transparent huge pages, and buffers filled through
// assign_on_huge_pages hold exactly what std::vector::assign would give; ZeroedPages reads zero
// everywhere, keeps what is written and moves.
#include <cstdint>
#include <fstream>
#include <utility>
#include <vector>

#include "core/huge_pages.h"
#include "tests/test_framework.h"

TEST(huge_page_advice_needs_a_whole_huge_page_in_the_range) {
  CHECK(!s3::advise_huge_pages(nullptr, s3::kHugePageBytes * 4));
  std::vector<uint8_t> small(s3::kHugePageBytes / 2);
  CHECK(!s3::advise_huge_pages(small.data(), small.size()));
  CHECK(!s3::advise_huge_pages(small.data(), 0));
}

TEST(huge_page_advice_is_taken_where_the_kernel_has_transparent_huge_pages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!thp.good()) return;  // no THP in this kernel (or not Linux): nothing to advise
  std::vector<uint8_t> buffer;
  buffer.reserve(s3::kHugePageBytes * 3);  // holds at least two whole aligned huge pages
  CHECK(s3::advise_huge_pages(buffer.data(), buffer.capacity()));
}

TEST(assign_on_huge_pages_fills_like_assign_and_replaces_earlier_contents) {
  std::vector<float> scales{3.0f, 4.0f};
  s3::assign_on_huge_pages(scales, s3::kHugePageBytes, 1.0f);  // 8 MiB of floats
  CHECK(scales.size() == s3::kHugePageBytes);
  bool all_one = true;
  for (float x : scales) all_one = all_one && x == 1.0f;
  CHECK(all_one);
  std::vector<uint8_t> bytes(7, 9);
  s3::assign_on_huge_pages<uint8_t>(bytes, 5, 0);  // smaller than a huge page: plain storage
  CHECK(bytes == std::vector<uint8_t>(5, 0));
}

TEST(zeroed_pages_read_zero_everywhere_hold_writes_and_move) {
  s3::ZeroedPages pages(s3::kHugePageBytes * 2 + 123);
  CHECK_EQ(pages.size(), s3::kHugePageBytes * 2 + 123);
  bool all_zero = true;
  for (size_t i = 0; i < pages.size(); i += 4093) all_zero = all_zero && pages.data()[i] == 0;
  CHECK(all_zero && pages.data()[pages.size() - 1] == 0);
  pages.data()[5] = 42;
  pages.data()[pages.size() - 1] = 7;
  s3::ZeroedPages moved(std::move(pages));
  CHECK(pages.data() == nullptr);
  CHECK_EQ(pages.size(), size_t(0));
  CHECK_EQ(int(moved.data()[5]), 42);
  CHECK_EQ(int(moved.data()[moved.size() - 1]), 7);
  s3::ZeroedPages empty;
  empty = std::move(moved);
  CHECK_EQ(int(empty.data()[5]), 42);
  CHECK(s3::ZeroedPages(0).data() == nullptr);
}
