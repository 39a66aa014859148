// The BF16-product linear layer of the trainer's bf16 mode (native/cpu/linear_bf16: f32 input and
// weight rounded to BF16, the forward matmul's BF16-weight kernels) at every SIMD level this machine
// runs, avx512bf16 included where the CPU has AVX512-BF16: against a double reference on the rounded
// operands and against the unrounded ones, on shapes with row, column and k tails; the same bits
// for a row alone or in a batch and for 1 or 2 threads; round_to_bf16 as core/dtype.h's f32_to_bf16.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/linear_bf16.h"
#include "tests/simd_levels.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

float bf16(float x) { return s3::bf16_to_f32(s3::f32_to_bf16(x)); }

std::vector<uint16_t> rounded_bits(const std::vector<float>& v, s3::ThreadPool& pool) {
  std::vector<uint16_t> out(v.size());
  s3::cpu::round_to_bf16(out.data(), v.data(), int64_t(v.size()), pool);
  return out;
}

TEST(round_to_bf16_is_f32_to_bf16_element_by_element) {
  s3::ThreadPool pool(2);
  std::vector<float> v = normal_values(200003, 1);  // several pool units and a tail
  const uint32_t special[] = {0x3F808000u, 0x00000001u, 0x7F7FFFFFu, 0x7F800001u, 0xFF800000u};
  for (size_t i = 0; i < 5; i++) std::memcpy(&v[i * 40000], &special[i], 4);
  const std::vector<uint16_t> out = rounded_bits(v, pool);
  for (size_t i = 0; i < v.size(); i++) {
    if (out[i] != s3::f32_to_bf16(v[i])) {
      CHECK_EQ(out[i], s3::f32_to_bf16(v[i]));
      break;
    }
  }
}

// The products of rounded operands are exact, so against the double reference on them only the f32
// sums' rounding remains (the forward matmul's bound, 1e-5 of Σ|x·w| here); against the unrounded
// operands BF16 rounding adds up to 2⁻⁸ Σ|x·w|, and on these shapes more than 2⁻¹⁶ of it somewhere.
TEST(linear_bf16_matches_the_reference_on_rounded_operands_at_every_level) {
  s3::ThreadPool pool(2);
  const int64_t shapes[][3] = {{1, 1, 1}, {5, 17, 3}, {13, 100, 300}, {7, 33, 257}, {3, 20, 513}, {64, 70, 32}};
  for (s3::SimdLevel level : s3::tests::runnable_levels_with_bf16()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (const auto& shape : shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const std::vector<float> x = normal_values(size_t(M * K), 2), w = normal_values(size_t(N * K), 3);
      const std::vector<uint16_t> wb = rounded_bits(w, pool);
      std::vector<float> out(size_t(M * N)), scratch;
      s3::cpu::linear_bf16(out.data(), x.data(), wb.data(), M, N, K, scratch, pool, kernels);
      double largest_rounding_effect = 0.0;
      for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
          double want = 0.0, unrounded = 0.0, scale = 0.0;
          for (int64_t k = 0; k < K; k++) {
            const double product = double(bf16(x[size_t(m * K + k)])) * double(bf16(w[size_t(n * K + k)]));
            want += product;
            unrounded += double(x[size_t(m * K + k)]) * double(w[size_t(n * K + k)]);
            scale += std::fabs(product);
          }
          const double got = out[size_t(m * N + n)];
          CHECK_NEAR(got, want, 1e-5 * scale + 1e-6);
          CHECK_NEAR(got, unrounded, 0x1p-8 * scale + 1e-5 * scale + 1e-6);
          largest_rounding_effect = std::fmax(largest_rounding_effect, std::fabs(got - unrounded) / scale);
        }
      }
      if (K >= 32) CHECK(largest_rounding_effect > 0x1p-16);
    }
  }
}

TEST(linear_bf16_bits_do_not_depend_on_threads_or_batch) {
  s3::ThreadPool pool1(1), pool2(2);
  const int64_t M = 23, N = 150, K = 333;
  const std::vector<float> x = normal_values(size_t(M * K), 4), w = normal_values(size_t(N * K), 5);
  const std::vector<uint16_t> wb = rounded_bits(w, pool2);
  for (s3::SimdLevel level : s3::tests::runnable_levels_with_bf16()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    std::vector<float> one(size_t(M * N)), two(one.size()), scratch;
    s3::cpu::linear_bf16(one.data(), x.data(), wb.data(), M, N, K, scratch, pool1, kernels);
    s3::cpu::linear_bf16(two.data(), x.data(), wb.data(), M, N, K, scratch, pool2, kernels);
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    for (int64_t m : {0, 9, 22}) {
      std::vector<float> row(static_cast<size_t>(N));
      s3::cpu::linear_bf16(row.data(), x.data() + m * K, wb.data(), 1, N, K, scratch, pool2, kernels);
      CHECK(std::memcmp(row.data(), one.data() + m * N, row.size() * sizeof(float)) == 0);
    }
  }
}

}  // namespace
