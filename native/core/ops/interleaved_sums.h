// interleaved_sums.h: a long sum in double as eight interleaved partial sums (term i into sum
// i mod 8) combined in one fixed order. The eight chains are independent, so the compiler
// vectorizes them where one chain would wait on each add, and the order is fixed by the code, not
// by the SIMD level: the row sums of cpu/rmsnorm_backward and the gradients' global norm of
// train/adamw use it.
#pragma once

#include <cstddef>

namespace s3::ops {

constexpr int kInterleavedSums = 8;

inline double combine_interleaved_sums(const double (&s)[kInterleavedSums]) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Σ x[i]² over i < n in double, x[i] into partial sum i mod 8.
inline double interleaved_sum_of_squares(const float* x, size_t n) {
  double s[kInterleavedSums] = {};
  size_t i = 0;
  for (; i + kInterleavedSums <= n; i += kInterleavedSums) {
    for (int j = 0; j < kInterleavedSums; j++) s[j] += double(x[i + j]) * double(x[i + j]);
  }
  for (int j = 0; i < n; i++, j++) s[j] += double(x[i]) * double(x[i]);
  return combine_interleaved_sums(s);
}

}  // namespace s3::ops
