// The C (+)= A·B kernels of the training path (native/cpu/matmul_nn) and the attention row
// kernels (native/cpu/attention_backward_rows.h) at every SIMD level this machine runs: against a
// double reference on shapes with row, vector and k-block tails, A read transposed through its
// strides, accumulation into C; and the determinism the trainer rests on: one FMA chain per element
// in increasing k, so the bits do not depend on the thread count or on how the columns are split.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/attention_backward_rows.h"
#include "cpu/matmul_nn.h"
#include "tests/simd_levels.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

using s3::cpu::MatmulNnArgs;

using s3::tests::runnable_levels;


// Every (M, N, K) against the double reference, row-major and transposed A, with and without
// accumulation, at each level.
TEST(matmul_nn_matches_reference_at_every_level) {
  const int64_t shapes[][3] = {{1, 1, 1}, {5, 17, 3}, {6, 64, 32}, {13, 100, 300}, {7, 33, 257}, {64, 2048 + 5, 32}};
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::MatmulNnKernels& kernels = *s3::cpu::matmul_nn_kernels_for(level);
    for (const auto& shape : shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const std::vector<float> a = normal_values(size_t(M * K), 1), b = normal_values(size_t(K * N), 2);
      const std::vector<float> c0 = normal_values(size_t(M * N), 3);
      for (int transposed = 0; transposed < 2; transposed++) {
        // The transposed case stores A as [K × M] and reads element (i, k) at i + k·M.
        std::vector<float> at(size_t(M * K));
        for (int64_t i = 0; i < M; i++) {
          for (int64_t k = 0; k < K; k++) at[size_t(k * M + i)] = a[size_t(i * K + k)];
        }
        for (int accumulate = 0; accumulate < 2; accumulate++) {
          std::vector<float> c = c0;
          MatmulNnArgs args = s3::cpu::matmul_nn_args(c.data(), transposed ? at.data() : a.data(), b.data(), M, N, K,
                                                      accumulate != 0);
          if (transposed) {
            args.a_row = 1;
            args.a_col = M;
          }
          kernels.columns(args, 0, N);
          for (int64_t i = 0; i < M; i++) {
            for (int64_t n = 0; n < N; n++) {
              double want = accumulate ? double(c0[size_t(i * N + n)]) : 0.0, scale = std::fabs(want);
              for (int64_t k = 0; k < K; k++) {
                want += double(a[size_t(i * K + k)]) * double(b[size_t(k * N + n)]);
                scale += std::fabs(double(a[size_t(i * K + k)]) * double(b[size_t(k * N + n)]));
              }
              CHECK_NEAR(double(c[size_t(i * N + n)]), want, 1e-5 * scale + 1e-6);
            }
          }
        }
      }
    }
  }
}

TEST(matmul_nn_bits_do_not_depend_on_threads_or_column_split) {
  const int64_t M = 37, N = 200, K = 600;
  const std::vector<float> a = normal_values(size_t(M * K), 4), b = normal_values(size_t(K * N), 5);
  std::vector<float> one(size_t(M * N)), two(size_t(M * N)), pieces(size_t(M * N));
  s3::ThreadPool pool1(1), pool2(2);
  s3::cpu::matmul_nn(s3::cpu::matmul_nn_args(one.data(), a.data(), b.data(), M, N, K, false), pool1);
  s3::cpu::matmul_nn(s3::cpu::matmul_nn_args(two.data(), a.data(), b.data(), M, N, K, false), pool2);
  const s3::cpu::MatmulNnArgs args = s3::cpu::matmul_nn_args(pieces.data(), a.data(), b.data(), M, N, K, false);
  const int64_t cuts[] = {0, 7, 23, 100, 101, N};  // pieces that start and end inside vectors and panels
  for (int piece = 0; piece + 1 < 6; piece++) s3::cpu::matmul_nn_kernels().columns(args, cuts[piece], cuts[piece + 1]);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(one.data(), pieces.data(), one.size() * sizeof(float)) == 0);
}

TEST(attention_row_kernels_match_the_scalar_exponential) {
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::AttentionRowKernels& rows = *s3::cpu::attention_row_kernels_for(level);
    for (int64_t n : {1, 7, 16, 33, 200}) {
      std::vector<float> row = normal_values(size_t(n), 6);
      for (float& x : row) x *= 30.0f;  // scores spread far enough to reach the underflow range
      const float scale = 0.177f;
      const std::vector<float> original = row;
      float max = 0.0f;
      const float total = rows.softmax_exp(row.data(), n, scale, &max);
      double want_max = -INFINITY, want_total = 0.0;
      for (float x : original) want_max = std::fmax(want_max, double(x * scale));
      CHECK_NEAR(double(max), want_max, 1e-6 * std::fabs(want_max));
      for (int64_t j = 0; j < n; j++) {
        const double e = std::exp(double(original[size_t(j)] * scale) - want_max);
        want_total += e;
        // The kernels fuse x·scale − max into one rounding; the reference rounds x·scale first.
        CHECK_NEAR(double(row[size_t(j)]), e, 2e-6 * e + 1e-30);
      }
      CHECK_NEAR(double(total), want_total, 1e-6 * want_total);

      std::vector<float> p = normal_values(size_t(n), 7), ds = normal_values(size_t(n), 8);
      const std::vector<float> p0 = p, ds0 = ds;
      rows.probs_and_grad(p.data(), ds.data(), n, scale, 0.3f, -0.2f);
      for (int64_t j = 0; j < n; j++) {
        const double e = std::exp(double(p0[size_t(j)] * scale) - 0.3);
        CHECK_NEAR(double(p[size_t(j)]), e, 2e-6 * e);
        const double g = e * (double(ds0[size_t(j)]) + 0.2) * double(scale);
        CHECK_NEAR(double(ds[size_t(j)]), g, 4e-6 * std::fabs(g) + 1e-7);
      }
    }
  }
}

}  // namespace
