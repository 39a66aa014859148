// The fused loss's row passes (cpu/loss_row.h): e^s within 2 ulp of the C library's for every s the
// rows meet (0 where it would be subnormal, NaN kept); the row sums as close to long-double sums as
// the plain loop of the C library's e^x in double is (or within 8 × 10⁻¹⁶); the gradient's z_v
// exactly core/ops/token_loss.h's token_loss_dlogit; and every SIMD level the machine runs giving
// the same bits for every length (the padded tail included).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/ops/token_loss.h"
#include "cpu/loss_row.h"
#include "tests/simd_levels.h"
#include "tests/test_framework.h"

namespace {

struct RowResult {
  std::vector<double> e;
  double total = 0, weighted = 0;
};

RowResult run(const s3::cpu::LossRowKernels& k, const std::vector<float>& z, float max, double temperature) {
  RowResult r;
  r.e.assign(z.size(), -1.0);
  k.exp_sums(r.e.data(), z.data(), int64_t(z.size()), max, temperature, &r.total, &r.weighted);
  return r;
}

std::vector<float> random_logits(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> z(n);
  for (float& x : z) x = normal(rng);
  return z;
}

float row_max(const std::vector<float>& z) {
  float max = -INFINITY;
  for (float x : z) max = x > max ? x : max;
  return max;
}

}  // namespace

TEST(loss_row_exp_is_within_2_ulp_of_the_c_library_and_zero_below_its_normals) {
  std::vector<float> z;
  for (int i = 0; i <= 800000; i++) z.push_back(-float(i) * 0.000937f);  // 0 to −750
  for (float x : {-0.0f, -1e-30f, -1e-45f, -0.34657359f, -0.34657360f, -707.99f, -708.0f, -708.01f, -745.2f,
                  -1e30f, -INFINITY}) {
    z.push_back(x);
  }
  for (const double temperature : {1.0, 0.7}) {
    for (s3::SimdLevel level : s3::tests::runnable_levels()) {
      const RowResult r = run(*s3::cpu::loss_row_kernels_for(level), z, 0.0f, temperature);
      for (size_t v = 0; v < z.size(); v++) {
        const double s = s3::ops::token_loss_scaled(z[v], 0.0f, temperature);
        if (s < -708.0) {
          CHECK_EQ(r.e[v], 0.0);
        } else {
          const double expected = std::exp(s);
          CHECK_NEAR(r.e[v], expected, 2.0 * std::ldexp(1.0, std::ilogb(expected) - 52));
        }
      }
    }
  }
  const std::vector<float> nan_row = {0.0f, NAN, -1.0f};
  const RowResult r = run(s3::cpu::loss_row_kernels(), nan_row, 0.0f, 1.0);
  CHECK(std::isnan(r.e[1]) && std::isnan(r.total) && std::isnan(r.weighted));
  CHECK_EQ(r.e[0], 1.0);
}

TEST(loss_row_sums_match_long_double_sums_and_every_level_gives_the_same_bits) {
  for (const size_t V : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(23), size_t(1000), size_t(151936)}) {
    const std::vector<float> z = random_logits(V, V);
    const float max = row_max(z);
    for (const double temperature : {1.0, 0.6}) {
      long double total = 0, weighted = 0;
      double loop_total = 0, loop_weighted = 0;  // the C library's e^x summed in order, in double
      for (size_t v = 0; v < V; v++) {
        const double s = s3::ops::token_loss_scaled(z[v], max, temperature);
        total += std::exp((long double)s);
        weighted += std::exp((long double)s) * s;
        loop_total += std::exp(s);
        loop_weighted += std::exp(s) * s;
      }
      // Within a few units of the last place, and no further off than that loop (plus 4 ulp).
      const double total_bound = std::max(4e-16 * double(total), std::fabs(loop_total - double(total))) + 4e-16 * double(total);
      const double weighted_bound = std::max(4e-16 * std::fabs(double(weighted)), std::fabs(loop_weighted - double(weighted))) +
                                    4e-16 * std::fabs(double(weighted));
      RowResult first;
      bool have_first = false;
      for (s3::SimdLevel level : s3::tests::runnable_levels()) {
        const RowResult r = run(*s3::cpu::loss_row_kernels_for(level), z, max, temperature);
        CHECK_NEAR(r.total, double(total), total_bound);
        CHECK_NEAR(r.weighted, double(weighted), weighted_bound);
        if (!have_first) {
          first = r;
          have_first = true;
        } else {
          CHECK(std::memcmp(r.e.data(), first.e.data(), V * sizeof(double)) == 0);
          CHECK(std::memcmp(&r.total, &first.total, sizeof(double)) == 0);
          CHECK(std::memcmp(&r.weighted, &first.weighted, sizeof(double)) == 0);
        }
      }
    }
  }
}

TEST(loss_row_dlogits_are_token_loss_dlogit_bit_for_bit_at_every_level) {
  for (const size_t V : {size_t(1), size_t(3), size_t(8), size_t(17), size_t(4099)}) {
    const std::vector<float> z = random_logits(V, 100 + V);
    const float max = row_max(z);
    for (const double temperature : {1.0, 0.7}) {
      const RowResult r = run(s3::cpu::loss_row_kernels(), z, max, temperature);
      s3::ops::TokenLossRow row;
      row.g = -0.37;
      row.draw_total = 0.125;
      const double inv = 1.0 / r.total;
      for (s3::SimdLevel level : s3::tests::runnable_levels()) {
        std::vector<float> d(V, 7.0f);
        s3::cpu::loss_row_kernels_for(level)->dlogits(d.data(), r.e.data(), int64_t(V), -(row.g + row.draw_total), inv,
                                                       temperature);
        for (size_t v = 0; v < V; v++) {
          const float expected = s3::ops::token_loss_dlogit(row, r.e[v], inv, temperature);
          CHECK(std::memcmp(&d[v], &expected, sizeof(float)) == 0);
        }
      }
    }
  }
}
