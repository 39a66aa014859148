// random_values.h: the seeded normal values the kernel tests draw their operands from
// (std::mt19937_64 through std::normal_distribution<float>, so a seed gives the same values on
// every machine with the same standard library).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace s3::tests {

inline std::vector<float> normal_values(size_t n, uint64_t seed, float mean = 0.0f, float stddev = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace s3::tests
