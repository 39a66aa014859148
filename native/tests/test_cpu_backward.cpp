// Each backward kernel of native/cpu/*_backward against central finite differences of its forward:
// L = Σ r ⊙ forward(inputs) for a fixed random r, differentiated numerically (accumulated in
// double) and compared with the kernel's gradients. Attention runs packed sequences with GQA.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention_backward.h"
#include "cpu/matmul.h"
#include "cpu/matmul_backward.h"
#include "cpu/matrix_view.h"
#include "cpu/rmsnorm.h"
#include "cpu/rmsnorm_backward.h"
#include "cpu/rope.h"
#include "cpu/rope_backward.h"
#include "cpu/swiglu.h"
#include "cpu/swiglu_backward.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

double weighted_sum(const std::vector<float>& out, const std::vector<float>& r) {
  double s = 0.0;
  for (size_t i = 0; i < out.size(); i++) s += double(out[i]) * double(r[i]);
  return s;
}

// Checks grad (analytic ∂L/∂x) against central differences of loss() in x, at every index (or a
// stride through them), perturbing x in place.
void check_grad(const std::string& what, std::vector<float>& x, const std::vector<float>& grad,
                const std::function<double()>& loss, float h = 1e-2f, double tol = 2e-3) {
  double gmax = 0.0;
  for (float g : grad) gmax = std::max(gmax, double(std::fabs(g)));
  const size_t stride = x.size() > 200 ? x.size() / 97 : 1;
  for (size_t i = 0; i < x.size(); i += stride) {
    const float x0 = x[i];
    x[i] = x0 + h;
    const double plus = loss();
    const float xp = x[i];
    x[i] = x0 - h;
    const double minus = loss();
    const float xm = x[i];
    x[i] = x0;
    const double fd = (plus - minus) / (double(xp) - double(xm));
    if (!(std::fabs(fd - double(grad[i])) <= tol * (gmax + std::fabs(fd)) + 1e-4)) {
      s3test::fail(__FILE__, __LINE__, what + "[" + std::to_string(i) + "]: analytic " + s3test::show(grad[i]) +
                                           " vs finite difference " + s3test::show(fd));
    }
  }
}

}  // namespace

TEST(backward_kernel_matmul) {
  s3::ThreadPool pool(2);
  const int64_t M = 7, N = 19, K = 13;
  std::vector<float> inp = normal_values(size_t(M * K), 1), w = normal_values(size_t(N * K), 2);
  const std::vector<float> r = normal_values(size_t(M * N), 3);
  auto loss = [&] {
    std::vector<float> out(size_t(M * N));
    s3::cpu::matmul_forward(out.data(), inp.data(), s3::cpu::MatrixView{w.data(), s3::DType::F32, N, K, nullptr}, M, pool);
    return weighted_sum(out, r);
  };
  std::vector<float> dinp(size_t(M * K)), dw(size_t(N * K), 0.5f);
  s3::cpu::matmul_backward(dinp.data(), dw.data(), r.data(), inp.data(), w.data(), M, N, K, pool);
  for (float& g : dw) g -= 0.5f;  // accumulated onto what was there
  check_grad("matmul dinp", inp, dinp, loss);
  check_grad("matmul dweight", w, dw, loss);
}

TEST(backward_kernel_rmsnorm) {
  const int64_t N = 6, C = 16;
  std::vector<float> x = normal_values(size_t(N * C), 4), w = normal_values(size_t(C), 5, 1.0f, 0.2f);
  const std::vector<float> r = normal_values(size_t(N * C), 6);
  auto loss = [&] {
    std::vector<float> out(size_t(N * C));
    s3::cpu::rmsnorm_forward(out.data(), x.data(), w.data(), N, C, 1e-6f);
    return weighted_sum(out, r);
  };
  std::vector<float> dx(size_t(N * C)), dw(size_t(C), 0.0f);
  s3::cpu::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), N, C, 1e-6f);
  check_grad("rmsnorm dx", x, dx, loss, 1e-2f);
  check_grad("rmsnorm dweight", w, dw, loss, 1e-2f);
}

// The RMSNorm backward's eight interleaved partial sums, over rows of several widths (tails of the
// eight included): dx is the formula in double within 1e-6 of its terms, in place too.
TEST(rmsnorm_backward_rows_of_any_width_match_the_formula_in_double) {
  for (const int64_t C : {int64_t(5), int64_t(16), int64_t(37), int64_t(128), int64_t(1024)}) {
    const int64_t N = 9;
    const std::vector<float> x = normal_values(size_t(N * C), 30, 0.2f, 2.0f), w = normal_values(size_t(C), 31, 1.0f, 0.3f);
    const std::vector<float> dy = normal_values(size_t(N * C), 32);
    std::vector<float> dx(size_t(N * C)), dw(size_t(C), 0.5f);
    s3::cpu::rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), N, C, 1e-6f);
    std::vector<float> in_place = dy, dw_in_place(size_t(C), 0.5f);
    s3::cpu::rmsnorm_backward(in_place.data(), dw_in_place.data(), in_place.data(), x.data(), w.data(), N, C, 1e-6f);
    CHECK(in_place == dx);
    CHECK(dw_in_place == dw);
    // With a residual stream: residual + dx, each element one f32 add, into another buffer or in
    // place over the residual.
    const std::vector<float> residual = normal_values(size_t(N * C), 33);
    std::vector<float> summed(size_t(N * C)), over_residual = residual, dw_summed(size_t(C), 0.5f);
    s3::cpu::rmsnorm_backward(summed.data(), dw_summed.data(), dy.data(), x.data(), w.data(), N, C, 1e-6f, residual.data());
    s3::cpu::rmsnorm_backward(over_residual.data(), dw_summed.data(), dy.data(), x.data(), w.data(), N, C, 1e-6f,
                              over_residual.data());
    for (size_t i = 0; i < summed.size(); i++) {
      const float want = residual[i] + dx[i];
      CHECK(std::memcmp(&summed[i], &want, 4) == 0);
      CHECK(std::memcmp(&over_residual[i], &want, 4) == 0);
    }
    for (int64_t n = 0; n < N; n++) {
      double ss = 0, dot = 0;
      for (int64_t i = 0; i < C; i++) {
        ss += double(x[size_t(n * C + i)]) * x[size_t(n * C + i)];
        dot += double(w[size_t(i)]) * dy[size_t(n * C + i)] * x[size_t(n * C + i)];
      }
      const double rstd = 1.0 / std::sqrt(ss / double(C) + 1e-6);
      for (int64_t i = 0; i < C; i++) {
        const size_t k = size_t(n * C + i);
        const double want = rstd * w[size_t(i)] * dy[k] - rstd * rstd * rstd * dot / double(C) * x[k];
        CHECK_NEAR(dx[k], want, 1e-6 * (std::fabs(want) + rstd * std::fabs(double(w[size_t(i)]) * dy[k])));
      }
    }
  }
}

TEST(backward_kernel_rope) {
  const int64_t T = 5, NH = 3, HD = 8;
  std::vector<int64_t> positions = {0, 1, 2, 7, 100};
  std::vector<float> cos(size_t(T * HD / 2)), sin(size_t(T * HD / 2));
  s3::cpu::rope_tables(cos.data(), sin.data(), positions.data(), T, HD, 10000.0f);
  std::vector<float> x = normal_values(size_t(T * NH * HD), 7), r = normal_values(size_t(T * NH * HD), 8);
  auto loss = [&] {
    std::vector<float> out = x;
    s3::cpu::rope_forward(out.data(), cos.data(), sin.data(), T, NH, HD);
    return weighted_sum(out, r);
  };
  std::vector<float> dx = r;
  s3::cpu::rope_backward(dx.data(), cos.data(), sin.data(), T, NH, HD);
  check_grad("rope dx", x, dx, loss);
}

TEST(backward_kernel_swiglu) {
  const int64_t N = 40;
  std::vector<float> g = normal_values(size_t(N), 9, 0.0f, 2.0f), u = normal_values(size_t(N), 10);
  const std::vector<float> r = normal_values(size_t(N), 11);
  auto loss = [&] {
    std::vector<float> out(static_cast<size_t>(N));
    s3::cpu::swiglu_forward(out.data(), g.data(), u.data(), N);
    return weighted_sum(out, r);
  };
  std::vector<float> dg(static_cast<size_t>(N)), du(static_cast<size_t>(N));
  s3::cpu::swiglu_backward(dg.data(), du.data(), r.data(), g.data(), u.data(), N);
  check_grad("swiglu dgate", g, dg, loss);
  check_grad("swiglu dup", u, du, loss);
}

TEST(backward_kernel_packed_gqa_attention) {
  s3::ThreadPool pool(2);
  const int64_t T = 9, NH = 4, NKV = 2, HD = 8;
  const std::vector<int64_t> begins = {0, 4, 5, 9};  // three sequences: 4, 1 and 4 tokens
  const s3::cpu::PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 3, /*block=*/3};  // blocks cross sequences' rows
  std::vector<float> q = normal_values(size_t(T * NH * HD), 12), k = normal_values(size_t(T * NKV * HD), 13);
  std::vector<float> v = normal_values(size_t(T * NKV * HD), 14), r = normal_values(size_t(T * NH * HD), 15);
  std::vector<float> out(size_t(T * NH * HD)), lse(size_t(T * NH));
  auto loss = [&] {
    s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), shape, pool);
    return weighted_sum(out, r);
  };
  loss();
  // Token 4 is a sequence of its own: its output is its own value row.
  for (int64_t h = 0; h < NH; h++) {
    for (int64_t d = 0; d < HD; d++) CHECK_NEAR(out[size_t((4 * NH + h) * HD + d)], v[size_t((4 * NKV + h / 2) * HD + d)], 1e-6);
  }
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), r.data(), out.data(), lse.data(), q.data(),
                                     k.data(), v.data(), shape, pool);
  check_grad("attention dq", q, dq, loss);
  check_grad("attention dk", k, dk, loss);
  check_grad("attention dv", v, dv, loss);
}

TEST(backward_kernel_blocked_attention_matches_rowwise_reference) {
  s3::ThreadPool pool(2);
  const int64_t NH = 4, NKV = 2, HD = 16;
  const std::vector<int64_t> begins = {0, 150, 151, 215, 300};  // lengths 150, 1, 64, 85
  const int64_t T = begins.back();
  std::vector<float> q = normal_values(size_t(T * NH * HD), 21), k = normal_values(size_t(T * NKV * HD), 22);
  std::vector<float> v = normal_values(size_t(T * NKV * HD), 23), dout = normal_values(size_t(T * NH * HD), 24);
  for (int64_t block : {64, 7, 1000}) {
    const s3::cpu::PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 4, block};
    std::vector<float> out(q.size()), lse(size_t(T * NH)), out_r(q.size()), lse_r(size_t(T * NH));
    s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), shape, pool);
    s3::cpu::causal_attention_train_forward_rowwise(out_r.data(), lse_r.data(), q.data(), k.data(), v.data(), shape, pool);
    for (size_t i = 0; i < out.size(); i++) CHECK_NEAR(out[i], out_r[i], 1e-5);
    for (size_t i = 0; i < lse.size(); i++) CHECK_NEAR(lse[i], lse_r[i], 1e-5);
    std::vector<float> dq(q.size()), dk(k.size()), dv(v.size()), dq_r(q.size()), dk_r(k.size()), dv_r(v.size());
    s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(),
                                       k.data(), v.data(), shape, pool);
    s3::cpu::causal_attention_backward_rowwise(dq_r.data(), dk_r.data(), dv_r.data(), dout.data(), out.data(),
                                               lse.data(), q.data(), k.data(), v.data(), shape, pool);
    for (size_t i = 0; i < dq.size(); i++) CHECK_NEAR(dq[i], dq_r[i], 1e-4);
    for (size_t i = 0; i < dk.size(); i++) CHECK_NEAR(dk[i], dk_r[i], 1e-4);
    for (size_t i = 0; i < dv.size(); i++) CHECK_NEAR(dv[i], dv_r[i], 1e-4);
  }
}

// A shared prefix (seq_parent) must give each child what the child computed with its own copy of
// the prefix gives, and the prefix the sum of its copies' key and value gradients: checked against
// the plain packing with the prefix duplicated, for the blocked kernels and the rowwise reference.
TEST(backward_kernel_attention_shared_prefix_matches_duplicated_prefix) {
  s3::ThreadPool pool(2);
  const int64_t NH = 4, NKV = 2, HD = 16, P = 37;
  const std::vector<int64_t> child_lengths = {20, 1, 70};
  // Shared layout: [prefix 37][child 0][child 1][child 2][lone sequence 9].
  const std::vector<int64_t> begins = {0, P, P + 20, P + 21, P + 91, P + 100};
  const std::vector<int64_t> parent = {-1, 0, 0, 0, -1};
  const int64_t T = begins.back();
  std::vector<float> q = normal_values(size_t(T * NH * HD), 31), k = normal_values(size_t(T * NKV * HD), 32);
  std::vector<float> v = normal_values(size_t(T * NKV * HD), 33), dout = normal_values(size_t(T * NH * HD), 34);
  for (int64_t r = 0; r < P; r++) {  // the prefix has no loss: nothing flows into its outputs
    for (int64_t i = 0; i < NH * HD; i++) dout[size_t(r * NH * HD + i)] = 0.0f;
  }
  // Duplicated layout: [prefix + child 0][prefix + child 1][prefix + child 2][lone]; dup_row maps rows.
  std::vector<int64_t> dup_begins = {0}, dup_row;
  for (size_t c = 0; c < child_lengths.size(); c++) {
    for (int64_t r = 0; r < P; r++) dup_row.push_back(r);
    for (int64_t r = 0; r < child_lengths[c]; r++) dup_row.push_back(begins[c + 1] + r);
    dup_begins.push_back(int64_t(dup_row.size()));
  }
  for (int64_t r = begins[4]; r < begins[5]; r++) dup_row.push_back(r);
  dup_begins.push_back(int64_t(dup_row.size()));
  const int64_t TD = int64_t(dup_row.size());
  auto gather = [&](const std::vector<float>& x, int64_t width, bool zero_prefix_copies) {
    std::vector<float> out(size_t(TD * width));
    for (int64_t r = 0; r < TD; r++) {
      const bool copy = dup_row[size_t(r)] < P;
      for (int64_t i = 0; i < width; i++) {
        out[size_t(r * width + i)] = copy && zero_prefix_copies ? 0.0f : x[size_t(dup_row[size_t(r)] * width + i)];
      }
    }
    return out;
  };
  const std::vector<float> qd = gather(q, NH * HD, false), kd = gather(k, NKV * HD, false);
  const std::vector<float> vd = gather(v, NKV * HD, false), doutd = gather(dout, NH * HD, true);
  const s3::cpu::PackedAttentionShape dup_shape{TD, NH, NKV, HD, dup_begins.data(), 4, 64};
  std::vector<float> out_d(qd.size()), lse_d(size_t(TD * NH)), dq_d(qd.size()), dk_d(kd.size()), dv_d(vd.size());
  s3::cpu::causal_attention_train_forward_rowwise(out_d.data(), lse_d.data(), qd.data(), kd.data(), vd.data(), dup_shape, pool);
  s3::cpu::causal_attention_backward_rowwise(dq_d.data(), dk_d.data(), dv_d.data(), doutd.data(), out_d.data(), lse_d.data(),
                                             qd.data(), kd.data(), vd.data(), dup_shape, pool);
  // What the shared layout must give: child rows as in the duplicate; prefix dk/dv summed over copies.
  std::vector<float> want_dk(k.size(), 0.0f), want_dv(v.size(), 0.0f);
  for (int64_t r = 0; r < TD; r++) {
    for (int64_t i = 0; i < NKV * HD; i++) {
      want_dk[size_t(dup_row[size_t(r)] * NKV * HD + i)] += dk_d[size_t(r * NKV * HD + i)];
      want_dv[size_t(dup_row[size_t(r)] * NKV * HD + i)] += dv_d[size_t(r * NKV * HD + i)];
    }
  }
  for (int64_t block : {64, 7}) {
    s3::cpu::PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 5, block};
    shape.seq_parent = parent.data();
    for (bool rowwise : {false, true}) {
      std::vector<float> out(q.size()), lse(size_t(T * NH)), dq(q.size()), dk(k.size()), dv(v.size());
      if (rowwise) {
        s3::cpu::causal_attention_train_forward_rowwise(out.data(), lse.data(), q.data(), k.data(), v.data(), shape, pool);
        s3::cpu::causal_attention_backward_rowwise(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(),
                                                   q.data(), k.data(), v.data(), shape, pool);
      } else {
        s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), shape, pool);
        s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(),
                                           k.data(), v.data(), shape, pool);
      }
      for (int64_t r = 0; r < TD; r++) {
        const int64_t row = dup_row[size_t(r)];
        if (row < P) continue;  // the prefix copies: compared through their sums below
        for (int64_t i = 0; i < NH * HD; i++) {
          CHECK_NEAR(out[size_t(row * NH * HD + i)], out_d[size_t(r * NH * HD + i)], 1e-5);
          CHECK_NEAR(dq[size_t(row * NH * HD + i)], dq_d[size_t(r * NH * HD + i)], 1e-4);
        }
      }
      for (size_t i = 0; i < dk.size(); i++) {
        CHECK_NEAR(dk[i], want_dk[i], 1e-4);
        CHECK_NEAR(dv[i], want_dv[i], 1e-4);
      }
      // The prefix's own outputs are those of the plain causal attention over it.
      for (int64_t i = 0; i < P * NH * HD; i++) CHECK_NEAR(out[size_t(i)], out_d[size_t(i)], 1e-5);
    }
  }
}
