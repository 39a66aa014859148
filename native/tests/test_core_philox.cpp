// test_core_philox.cpp: Philox4x32-10 against Random123's known-answer vectors (kat_vectors,
// "philox4x32 10" lines), s3's documented keying, and the uniform mapping's range.
#include <cmath>
#include <cstdint>

#include "core/philox.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

void check_kat(Philox4x32 counter, PhiloxKey key, Philox4x32 expected) {
  Philox4x32 got = philox4x32_10(counter, key);
  for (int i = 0; i < 4; i++) CHECK_EQ(got.word[i], expected.word[i]);
}

}  // namespace

TEST(philox_known_answers) {
  check_kat({{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}});
  check_kat({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, {{0xffffffff, 0xffffffff}},
            {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}});
  check_kat({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, {{0xa4093822, 0x299f31d0}},
            {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}});
}

TEST(philox_keying_layout) {
  const uint64_t seed = 0x0123456789ABCDEFull, token = 0xFEDCBA9876543210ull;
  Philox4x32 direct = philox4x32_10({{0x76543210, 0xFEDCBA98, 7, 3}}, {{0x89ABCDEF, 0x01234567}});
  Philox4x32 keyed = philox_block(seed, token, 7, 3);
  for (int i = 0; i < 4; i++) CHECK_EQ(keyed.word[i], direct.word[i]);
  CHECK_EQ(philox_uniform(seed, token, 7, 3), uniform_from_bits(direct.word[0]));
  // Every component of the key and counter changes the draw.
  float base = philox_uniform(1, 2, 3, 4);
  CHECK(philox_uniform(1ull << 32 | 1, 2, 3, 4) != base);
  CHECK(philox_uniform(1, 2ull << 32 | 2, 3, 4) != base);
  CHECK(philox_uniform(1, 2, 4, 4) != base);
  CHECK(philox_uniform(1, 2, 3, 5) != base);
  CHECK_EQ(philox_uniform(1, 2, 3, 4), base);
}

TEST(philox_uniform_range_and_mapping) {
  CHECK_EQ(uniform_from_bits(0), 0.0f);
  CHECK_EQ(uniform_from_bits(0xFFFFFFFFu), 1.0f - 0x1p-24f);
  CHECK_EQ(uniform_from_bits(0x80000000u), 0.5f);
  CHECK_EQ(uniform_from_bits(0x000000FFu), 0.0f);  // the low 8 bits are dropped
  const int bins = 16;
  const uint32_t draws = 1 << 20;
  long counts[bins] = {};
  double sum = 0;
  for (uint32_t i = 0; i < draws; i++) {
    float value = philox_uniform(42, i, 0);
    CHECK(value >= 0.0f && value < 1.0f);
    CHECK_EQ(value * 16777216.0f, std::floor(value * 16777216.0f));  // a multiple of 2^-24
    counts[int(value * bins)]++;
    sum += value;
  }
  CHECK_NEAR(sum / draws, 0.5, 0.002);
  double chi_square = 0;
  for (long count : counts) chi_square += std::pow(count - double(draws) / bins, 2) / (double(draws) / bins);
  CHECK(chi_square < 40.0);  // 15 degrees of freedom: p < 0.001 above ~37.7
}
