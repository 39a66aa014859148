// The f32-moment AdamW update tables (cpu/adamw_update.h) at every SIMD level this machine runs:
// bit for bit the scalar formula of core/ops/adamw.h on every element, at lengths that do and do
// not fill whole vectors (the zero-padded tail), with zero, tiny, huge, infinite and NaN gradients.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/ops/adamw.h"
#include "cpu/adamw_update.h"
#include "tests/simd_levels.h"
#include "tests/test_framework.h"

TEST(adamw_update_tables_give_the_scalar_formulas_bits_at_every_level) {
  const s3::ops::AdamWCoefficients k{0.9f, 0.999f, 0.271f, 0.00299f, 1e-3f, 1e-8f, 0.01f, 0.37f};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (s3::SimdLevel level : s3::tests::runnable_levels()) {
    const s3::cpu::AdamwUpdateKernels& kernels = *s3::cpu::adamw_update_kernels_for(level);
    for (int64_t n : {1, 3, 15, 16, 17, 31, 1000}) {
      const size_t count = static_cast<size_t>(n);
      std::vector<float> g(count), m(count), v(count), p(count);
      for (int64_t i = 0; i < n; i++) {
        g[size_t(i)] = normal(rng) * std::pow(10.0f, float(i % 9) - 4.0f);
        m[size_t(i)] = normal(rng) * 1e-2f;
        v[size_t(i)] = std::fabs(normal(rng)) * 1e-4f;
        p[size_t(i)] = normal(rng);
      }
      if (n >= 17) {
        g[0] = 0.0f, m[0] = 0.0f, v[0] = 0.0f;
        g[1] = 1e-40f;
        g[2] = 3e38f;
        g[3] = std::numeric_limits<float>::infinity();
        g[4] = std::numeric_limits<float>::quiet_NaN();
      }
      std::vector<float> m_ref = m, v_ref = v, p_ref = p;
      for (int64_t i = 0; i < n; i++) s3::ops::adamw_update(k, g[size_t(i)], m_ref[size_t(i)], v_ref[size_t(i)], p_ref[size_t(i)]);
      kernels.update(k, g.data(), m.data(), v.data(), p.data(), n);
      const bool same = std::memcmp(m.data(), m_ref.data(), size_t(n) * 4) == 0 &&
                        std::memcmp(v.data(), v_ref.data(), size_t(n) * 4) == 0 &&
                        std::memcmp(p.data(), p_ref.data(), size_t(n) * 4) == 0;
      if (!same) std::printf("  %s, n = %lld: bits differ from ops::adamw_update\n", kernels.name, (long long)n);
      CHECK(same);
    }
  }
}
