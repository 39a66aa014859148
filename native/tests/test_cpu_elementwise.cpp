// The row-wise CPU kernels (rmsnorm, rope, swiglu, residual, embedding) against their formulas
// evaluated in double.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "cpu/embedding.h"
#include "cpu/rmsnorm.h"
#include "cpu/rope.h"
#include "cpu/swiglu.h"
#include "tests/naive_qwen3.h"
#include "tests/simd_levels.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

}  // namespace

TEST(rmsnorm_normalizes_each_row_then_applies_the_weight) {
  const int64_t N = 5, C = 37;
  const std::vector<float> x = normal_values(size_t(N * C), 1, 0.3f, 4.0f);
  const std::vector<float> weight = normal_values(size_t(C), 2, 1.0f, 0.2f);
  std::vector<float> out(x.size()), in_place = x;
  s3::cpu::rmsnorm_forward(out.data(), x.data(), weight.data(), N, C, 1e-6f);
  s3::cpu::rmsnorm_forward(in_place.data(), in_place.data(), weight.data(), N, C, 1e-6f);
  CHECK(out == in_place);
  for (int64_t n = 0; n < N; n++) {
    double mean_square = 0.0;
    for (int64_t c = 0; c < C; c++) mean_square += double(x[size_t(n * C + c)]) * x[size_t(n * C + c)] / double(C);
    for (int64_t c = 0; c < C; c++) {
      const double expected = weight[size_t(c)] * x[size_t(n * C + c)] / std::sqrt(mean_square + 1e-6);
      CHECK_NEAR(out[size_t(n * C + c)], expected, 1e-6 * std::fabs(expected) + 1e-7);
    }
  }
}

TEST(rmsnorm_eps_matters_only_for_tiny_rows) {
  const float zeros[4] = {0, 0, 0, 0}, weight[4] = {1, 1, 1, 1};
  float out[4];
  s3::cpu::rmsnorm_forward(out, zeros, weight, 1, 4, 1e-6f);
  for (float v : out) CHECK_EQ(v, 0.0f);
}

TEST(rope_is_rotate_half_with_qwen3_frequencies) {
  const int64_t T = 3, NH = 2, HD = 16;
  const int64_t positions[] = {0, 1, 40000};
  std::vector<float> cos(size_t(T * HD / 2)), sin(cos.size());
  s3::cpu::rope_tables(cos.data(), sin.data(), positions, T, HD, 1e6f);
  const std::vector<float> x = normal_values(size_t(T * NH * HD), 3, 0.0f, 1.0f);
  std::vector<float> rotated = x;
  s3::cpu::rope_forward(rotated.data(), cos.data(), sin.data(), T, NH, HD);
  // Position 0 is the identity.
  CHECK(std::equal(rotated.begin(), rotated.begin() + NH * HD, x.begin()));
  for (int64_t t = 1; t < T; t++) {
    std::vector<double> expected(x.begin() + t * NH * HD, x.begin() + (t + 1) * NH * HD);
    s3test::naive::rope(expected, size_t(HD), positions[t], 1e6);
    // Position 40000 amplifies the f32 angle's rounding (HF computes it in f32 too).
    const double tolerance = positions[t] > 1000 ? 5e-3 : 1e-6;
    for (int64_t i = 0; i < NH * HD; i++) CHECK_NEAR(rotated[size_t(t * NH * HD + i)], expected[size_t(i)], tolerance);
  }
  // Frequencies: inv_freq[j] = 1e6^(-2j/16) in f32, so j = 0 turns by exactly the position.
  CHECK_NEAR(cos[size_t(HD / 2)], std::cos(1.0), 1e-7);
  CHECK_NEAR(sin[size_t(HD / 2 + 1)], std::sin(std::pow(1e6, -2.0 / 16.0)), 1e-7);
}

TEST(swiglu_and_residual) {
  const std::vector<float> gate = normal_values(100, 4, 0.0f, 3.0f), up = normal_values(100, 5, 0.0f, 1.0f);
  std::vector<float> out(100);
  s3::cpu::swiglu_forward(out.data(), gate.data(), up.data(), 100);
  for (size_t i = 0; i < 100; i++) {
    const double expected = double(gate[i]) / (1.0 + std::exp(-double(gate[i]))) * up[i];
    CHECK_NEAR(out[i], expected, 1e-6 * std::fabs(expected) + 1e-7);
  }
  const float extreme_gate[3] = {-200.0f, 200.0f, 0.0f}, ones[3] = {1, 1, 1};
  float extreme[3];
  s3::cpu::swiglu_forward(extreme, extreme_gate, ones, 3);
  CHECK_EQ(extreme[0], 0.0f);
  CHECK_EQ(extreme[1], 200.0f);
  CHECK_EQ(extreme[2], 0.0f);
  std::vector<float> x = gate;
  s3::cpu::residual_forward(x.data(), up.data(), 100);
  for (size_t i = 0; i < 100; i++) CHECK_EQ(x[i], gate[i] + up[i]);
}

// The vector SwiGLU (cpu/swiglu_lanes.h) at every level this machine runs: within 4 ulp of the
// double formula over gates from −100 to 100 (its own e^x is about 1 ulp; then 1 + e, the division
// and the product; e^−gate overflows to inf as expf does; results below f32's normal range may be
// 0), the limits (overflowing e^−gate gives −0 · up, a vanishing one gate · up), NaN
// and infinities as the formula with the C library's expf gives them, in place, at lengths off the
// vector widths, and the same bits at every level.
TEST(swiglu_levels_agree_bit_for_bit_and_stay_within_4_ulp) {
  std::vector<float> gate, up;
  for (int i = -1000000; i <= 1000000; i += 7) gate.push_back(float(i) * 1e-4f);
  for (float g : {-88.8f, -88.72f, -88.0f, -87.4f, -87.3f, 87.3f, 88.8f, 1e-30f, -1e-30f, 1e-45f, 0.0f, -0.0f}) {
    gate.push_back(g);
  }
  for (size_t i = 0; i < gate.size(); i++) up.push_back(i % 3 == 0 ? 1.0f : float(int(i % 11) - 5) * 0.37f);
  const size_t N = gate.size();
  std::vector<float> first;
  for (s3::SimdLevel level : s3::tests::runnable_levels()) {
    const s3::cpu::SwigluKernels& kernels = *s3::cpu::swiglu_kernels_for(level);
    std::vector<float> out(N);
    kernels.forward(out.data(), gate.data(), up.data(), int64_t(N));
    for (size_t i = 0; i < N; i++) {
      // e^−gate past f32's largest value is inf in f32, as expf gives it.
      const double g = gate[i], e = std::exp(-g) > double(FLT_MAX) ? INFINITY : std::exp(-g);
      const double expected = g / (1.0 + e) * double(up[i]);
      const double ulp = std::ldexp(1.0, std::max(std::ilogb(expected), -126) - 23);
      CHECK_NEAR(double(out[i]), expected, 4.0 * ulp + 0x1p-126);  // values below f32's normals may flush
    }
    if (first.empty()) {
      first = out;
    } else {
      CHECK(out == first);
    }
    // In place, and every length up to two vectors past the widest (the zero-padded tail).
    for (int64_t n = 0; n <= 40; n++) {
      std::vector<float> in_place(gate.begin(), gate.begin() + n);
      kernels.forward(in_place.data(), in_place.data(), up.data(), n);
      CHECK(std::equal(in_place.begin(), in_place.end(), first.begin()));
    }
    const float special[] = {-200.0f, 200.0f, NAN, INFINITY, -INFINITY};
    const float ones[] = {1, 1, 1, 1, 1};
    float result[5];
    kernels.forward(result, special, ones, 5);
    CHECK(result[0] == 0.0f && std::signbit(result[0]));
    CHECK_EQ(result[1], 200.0f);
    CHECK(std::isnan(result[2]));
    CHECK_EQ(result[3], INFINITY);
    CHECK(std::isnan(result[4]));  // −inf / (1 + inf), as with expf
  }
}

// The SwiGLU backward (the same table's backward, the forward's e^x): the same bits at every level,
// in place too and for every tail length; each gradient within 16 ulp (of the size of its terms, plus
// f32's smallest normal) of core/ops/swiglu.h's silu_mul_backward in double with the exact e^x, and 0 where
// e^−gate overflows f32 (σ = 0, as the C library's expf makes it).
TEST(swiglu_backward_levels_agree_bit_for_bit_and_match_the_formula) {
  std::vector<float> gate;
  for (int i = -200000; i <= 200000; i += 3) gate.push_back(float(i) * 5e-4f);
  for (float g : {-88.8f, -87.4f, 87.3f, 88.8f, 1e-30f, 0.0f, -0.0f}) gate.push_back(g);
  const size_t N = gate.size();
  const std::vector<float> up = normal_values(N, 21, 0.0f, 1.5f), dout = normal_values(N, 22, 0.0f, 1.0f);
  std::vector<float> first_dg, first_du;
  for (s3::SimdLevel level : s3::tests::runnable_levels()) {
    const s3::cpu::SwigluKernels& kernels = *s3::cpu::swiglu_kernels_for(level);
    std::vector<float> dg(N), du(N);
    kernels.backward(dg.data(), du.data(), dout.data(), gate.data(), up.data(), int64_t(N));
    for (size_t i = 0; i < N; i++) {
      if (gate[i] < -88.72283f) {  // e^−gate overflows f32, so σ is 0, as with expf: zero gradients
        CHECK(dg[i] == 0.0f && du[i] == 0.0f);
        continue;
      }
      const double g = gate[i], sigmoid = 1.0 / (1.0 + std::exp(-g));
      const double want_du = double(dout[i]) * g * sigmoid;
      const double want_dg = double(dout[i]) * double(up[i]) * sigmoid * (1.0 + g * (1.0 - sigmoid));
      // dgate's last factor cancels near gate ≈ −1.28: its error is relative to the terms' size.
      const double dg_scale = std::fabs(double(dout[i]) * double(up[i]) * sigmoid) * (1.0 + std::fabs(g * (1.0 - sigmoid)));
      for (const auto& [got, want, scale] : {std::tuple<double, double, double>{du[i], want_du, want_du}, {dg[i], want_dg, dg_scale}}) {
        const double ulp = std::ldexp(1.0, std::max(std::ilogb(scale), -126) - 23);
        CHECK_NEAR(got, want, 16.0 * ulp + 0x1p-126);
      }
    }
    if (first_dg.empty()) {
      first_dg = dg, first_du = du;
    } else {
      CHECK(dg == first_dg);
      CHECK(du == first_du);
    }
    for (int64_t n = 0; n <= 40; n++) {  // in place (dgate over gate, dup over up), every tail
      std::vector<float> g_in(gate.begin(), gate.begin() + n), u_in(up.begin(), up.begin() + n);
      kernels.backward(g_in.data(), u_in.data(), dout.data(), g_in.data(), u_in.data(), n);
      CHECK(std::equal(g_in.begin(), g_in.end(), first_dg.begin()));
      CHECK(std::equal(u_in.begin(), u_in.end(), first_du.begin()));
    }
  }
}

TEST(embedding_reads_rows_of_every_dtype_and_refuses_unknown_tokens) {
  const int64_t V = 300, C = 20;
  const std::vector<float> table = normal_values(size_t(V * C), 6, 0.0f, 1.0f);
  const int32_t tokens[] = {0, 299, 128, 5};
  for (s3::DType dtype : {s3::DType::F32, s3::DType::BF16, s3::DType::F16, s3::DType::F8_E4M3}) {
    s3test::TestModel storage;
    s3test::add_test_tensor(storage, "e", {V, C}, table, dtype);
    const s3::cpu::MatrixView view{storage.tensor("e").bytes.data(), dtype, V, C,
                                   dtype == s3::DType::F8_E4M3
                                       ? reinterpret_cast<const float*>(storage.tensor("e_scale_inv").bytes.data())
                                       : nullptr};
    const std::vector<double> exact = storage.values("e");
    std::vector<float> out(4 * C);
    s3::cpu::embedding_forward(out.data(), tokens, 4, view);
    for (int64_t t = 0; t < 4; t++) {
      for (int64_t c = 0; c < C; c++) CHECK_EQ(out[size_t(t * C + c)], float(exact[size_t(tokens[t] * C + c)]));
    }
    const int32_t bad[] = {3, 300};
    CHECK_THROWS(std::out_of_range, s3::cpu::embedding_forward(out.data(), bad, 2, view));
  }
}
