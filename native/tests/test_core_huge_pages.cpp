// Huge-page advice (core/huge_pages.h): refused for ranges without a whole 2 MiB page, taken for
// one that holds some where the kernel has transparent huge pages, and buffers filled through
// assign_on_huge_pages (resize_on_huge_pages) hold exactly what std::vector::assign (resize) would
// give; ZeroedPages reads zero everywhere, keeps what is written and moves.
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

TEST(resize_on_huge_pages_keeps_the_elements_and_value_initializes_the_rest_like_resize) {
  std::vector<float> grown{1.5f, -2.0f, 3.25f};
  s3::resize_on_huge_pages(grown, s3::kHugePageBytes);  // new storage of 8 MiB
  std::vector<float> expected{1.5f, -2.0f, 3.25f};
  expected.resize(s3::kHugePageBytes);
  CHECK(grown == expected);
  const float* storage = grown.data();
  grown[7] = 5.0f;
  s3::resize_on_huge_pages(grown, 10);  // shrinking keeps the storage and the first elements
  CHECK(grown.data() == storage);
  CHECK(grown.size() == size_t(10));
  CHECK(grown[0] == 1.5f && grown[2] == 3.25f && grown[3] == 0.0f && grown[7] == 5.0f);
  s3::resize_on_huge_pages(grown, s3::kHugePageBytes / 2);  // within the capacity: no new storage
  CHECK(grown.data() == storage);
  CHECK(grown[7] == 5.0f && grown[11] == 0.0f && grown.back() == 0.0f);
  std::vector<int> small{4};
  s3::resize_on_huge_pages(small, 3);  // smaller than a huge page: plain storage
  CHECK(small == std::vector<int>({4, 0, 0}));
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
