// test_cuda_backward.cpp: the trainer's per-element and per-row backward ops and AdamW on the
// device against their CPU twins (which test_cpu_backward.cpp checks by finite differences), with
// each comparison's threshold stated: exact where both sides share core/ops arithmetic and order
// (RoPE, the embedding's scatter, AdamW without clipping, the backward GEMMs on small integers);
// double-rounding of reordered sums for RMSNorm (NMSE ≤ 1e-12: sums in double, results in f32); f32
// rounding for SwiGLU (expf differs in its last bit, NMSE ≤ 1e-7) and for the backward GEMMs on
// random values (f32 operands NMSE ≤ 1e-9; bf16 operands against the CPU on the same bf16-rounded
// values, NMSE ≤ 1e-7). Every device op is also run twice for bit-identical results (no atomics).
// The host-side token grouping of the embedding backward runs without a GPU.
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/embedding_backward.h"
#include "cpu/matmul_backward.h"
#include "cpu/rmsnorm_backward.h"
#include "cpu/rope.h"
#include "cpu/rope_backward.h"
#include "cpu/swiglu_backward.h"
#include "tests/cuda_test_support.h"
#include "train/adamw.h"

#ifdef S3_WITH_CUDA
#include "cuda/adamw.h"
#include "cuda/check.h"
#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "cuda/embedding_backward.h"
#include "cuda/matmul_backward.h"
#include "cuda/rmsnorm_backward.h"
#include "cuda/rope_backward.h"
#include "cuda/swiglu_backward.h"

using s3test::DeviceArray;

namespace {

}  // namespace

TEST(cuda_token_groups_list_each_tokens_positions_in_order) {
  const std::vector<int32_t> tokens = {7, 3, 7, 0, 3, 7, 151935};
  const s3::cuda::TokenGroups g = s3::cuda::group_positions_by_token(tokens.data(), int64_t(tokens.size()));
  CHECK(g.tokens == (std::vector<int32_t>{0, 3, 7, 151935}));
  CHECK(g.offsets == (std::vector<int32_t>{0, 1, 3, 6, 7}));
  CHECK(g.positions == (std::vector<int32_t>{3, 1, 4, 0, 2, 5, 6}));
  const s3::cuda::TokenGroups none = s3::cuda::group_positions_by_token(nullptr, 0);
  CHECK_EQ(none.count(), int64_t(0));
  CHECK(none.offsets == (std::vector<int32_t>{0}));
}

TEST(cuda_rmsnorm_backward_matches_cpu_for_rows_and_heads) {
  s3test::require_gpu();
  // 600 rows cross two chunk boundaries of dweight's sums; 3200 × 128 are per-head q/k norms.
  for (auto [N, C] : {std::pair<int64_t, int64_t>{37, 1024}, {3200, 128}, {5, 16}, {600, 300}}) {
    const std::string shape = " N=" + std::to_string(N) + " C=" + std::to_string(C);
    const std::vector<float> x = s3test::random_floats(size_t(N * C), 1, 3.0f), w = s3test::random_floats(size_t(C), 2);
    const std::vector<float> dy = s3test::random_floats(size_t(N * C), 3);
    const std::vector<float> dw0 = s3test::random_floats(size_t(C), 4);  // dweight accumulates
    std::vector<float> want_dx(x.size()), want_dw = dw0;
    s3::cpu::rmsnorm_backward(want_dx.data(), want_dw.data(), dy.data(), x.data(), w.data(), N, C, 1e-6f);
    DeviceArray<float> d_x(x), d_w(w), d_dy(dy), d_dx(x.size()), d_dw(dw0);
    DeviceArray<uint8_t> scratch(s3::cuda::rmsnorm_backward_scratch_bytes(N, C));
    s3::cuda::rmsnorm_backward(d_dx.get(), d_dw.get(), d_dy.get(), d_x.get(), d_w.get(), N, C, 1e-6f, scratch.get(), nullptr);
    const std::vector<float> dx = d_dx.download(), dw = d_dw.download();
    CHECK_NMSE("rmsnorm_backward dx" + shape, dx.data(), want_dx.data(), dx.size(), 1e-12);
    CHECK_NMSE("rmsnorm_backward dweight" + shape, dw.data(), want_dw.data(), dw.size(), 1e-12);
    std::printf("  rmsnorm_backward%s: %zu of %zu dx and %zu of %zu dweight values differ in any bit\n", shape.c_str(),
                s3test::exact_mismatches(dx, want_dx), dx.size(), s3test::exact_mismatches(dw, want_dw), dw.size());
    // In place over dout, and again: the same bits.
    d_dw.upload(dw0);
    s3::cuda::rmsnorm_backward(d_dy.get(), d_dw.get(), d_dy.get(), d_x.get(), d_w.get(), N, C, 1e-6f, scratch.get(), nullptr);
    CHECK_EQ(s3test::exact_mismatches(d_dy.download(), dx), size_t(0));
    CHECK_EQ(s3test::exact_mismatches(d_dw.download(), dw), size_t(0));
  }
}

TEST(cuda_rope_backward_is_bit_identical_to_cpu) {
  s3test::require_gpu();
  const int64_t T = 70, NH = 16, HD = 128, P = 5000;
  std::vector<int64_t> all(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; p++) all[size_t(p)] = p;
  std::vector<float> cos(size_t(P * HD / 2)), sin(cos.size());
  s3::cpu::rope_tables(cos.data(), sin.data(), all.data(), P, HD, 1e6f);
  std::vector<int32_t> positions(static_cast<size_t>(T));
  std::vector<int64_t> positions64(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; t++) positions64[size_t(t)] = positions[size_t(t)] = int32_t((t * 71 + 3) % P);
  std::vector<float> dx = s3test::random_floats(size_t(T * NH * HD), 5), want = dx;
  std::vector<float> tcos(size_t(T * HD / 2)), tsin(tcos.size());
  s3::cpu::rope_tables(tcos.data(), tsin.data(), positions64.data(), T, HD, 1e6f);
  s3::cpu::rope_backward(want.data(), tcos.data(), tsin.data(), T, NH, HD);
  DeviceArray<float> d_dx(dx), d_cos(cos), d_sin(sin);
  DeviceArray<int32_t> d_pos(positions);
  s3::cuda::rope_backward(d_dx.get(), d_pos.get(), d_cos.get(), d_sin.get(), T, NH, HD, nullptr);
  CHECK_EQ(s3test::exact_mismatches(d_dx.download(), want), size_t(0));
}

TEST(cuda_swiglu_backward_matches_cpu) {
  s3test::require_gpu();
  const int64_t N = 3 * 3072 + 5;
  const std::vector<float> g = s3test::random_floats(size_t(N), 6, 4.0f), u = s3test::random_floats(size_t(N), 7), dy = s3test::random_floats(size_t(N), 8);
  std::vector<float> want_dg(static_cast<size_t>(N)), want_du(static_cast<size_t>(N));
  s3::cpu::swiglu_backward(want_dg.data(), want_du.data(), dy.data(), g.data(), u.data(), N);
  DeviceArray<float> d_g(g), d_u(u), d_dy(dy), d_dg(static_cast<size_t>(N)), d_du(static_cast<size_t>(N));
  s3::cuda::swiglu_backward(d_dg.get(), d_du.get(), d_dy.get(), d_g.get(), d_u.get(), N, nullptr);
  const std::vector<float> dg = d_dg.download(), du = d_du.download();
  CHECK_NMSE("swiglu_backward dgate", dg.data(), want_dg.data(), dg.size(), 1e-7);
  CHECK_NMSE("swiglu_backward dup", du.data(), want_du.data(), du.size(), 1e-7);
  // In place over gate and up (the trainer's buffers): the same bits.
  s3::cuda::swiglu_backward(d_g.get(), d_u.get(), d_dy.get(), d_g.get(), d_u.get(), N, nullptr);
  CHECK_EQ(s3test::exact_mismatches(d_g.download(), dg), size_t(0));
  CHECK_EQ(s3test::exact_mismatches(d_u.download(), du), size_t(0));
}

TEST(cuda_embedding_backward_is_bit_identical_to_cpu) {
  s3test::require_gpu();
  const int64_t V = 4096, C = 300, T = 517;
  std::vector<int32_t> tokens(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; t++) tokens[size_t(t)] = int32_t((t * t * 7 + 11) % 61) * 67;  // many repeats
  tokens[3] = int32_t(V - 1);
  const std::vector<float> dout = s3test::random_floats(size_t(T * C), 9), table0 = s3test::random_floats(size_t(V * C), 10);
  std::vector<float> want = table0;
  s3::cpu::embedding_backward(want.data(), dout.data(), tokens.data(), T, C);
  const s3::cuda::TokenGroups groups = s3::cuda::group_positions_by_token(tokens.data(), T);
  DeviceArray<float> d_table(table0), d_dout(dout);
  DeviceArray<int32_t> d_tokens(groups.tokens), d_offsets(groups.offsets), d_positions(groups.positions);
  s3::cuda::embedding_backward(d_table.get(), d_dout.get(), d_tokens.get(), d_offsets.get(), d_positions.get(),
                               groups.count(), C, nullptr);
  CHECK_EQ(s3test::exact_mismatches(d_table.download(), want), size_t(0));
}

namespace {

// Three AdamW steps on the CPU and on the device from the same gradients; the device plans each
// update from its own norm with train::adamw_plan_update, as a device trainer will.
void compare_adamw(const s3::train::AdamWOptions& o, bool expect_exact) {
  const size_t n = 300007;  // not a multiple of 4: the bf16 kernel's last Philox block is partial
  std::vector<float> p_cpu = s3test::random_floats(n, 11);
  s3::train::AdamWState state;
  s3::ThreadPool pool(2);
  DeviceArray<float> d_p(p_cpu), d_g(n), d_m(std::vector<float>(n, 0.0f)), d_v(std::vector<float>(n, 0.0f));
  DeviceArray<uint16_t> d_m16(std::vector<uint16_t>(n, 0)), d_v16(std::vector<uint16_t>(n, 0));
  DeviceArray<uint8_t> scratch(s3::cuda::gradient_norm_scratch_bytes());
  const bool bf16 = o.state_dtype == s3::train::OptimizerStateDtype::Bf16;
  for (int step = 1; step <= 3; step++) {
    const std::vector<float> g = s3test::random_floats(n, uint32_t(100 + step), 0.01f * float(step));
    const s3::train::AdamWStepResult cpu = s3::train::adamw_step(p_cpu.data(), g.data(), n, state, o, pool);
    d_g.upload(g);
    const double norm = s3::cuda::gradient_norm(d_g.get(), n, scratch.get(), nullptr);
    CHECK_NEAR(norm / cpu.grad_norm, 1.0, 1e-13);
    const s3::train::AdamWUpdate update = s3::train::adamw_plan_update(o, step, norm);
    if (bf16) {
      s3::cuda::adamw_update_bf16(d_p.get(), d_g.get(), d_m16.get(), d_v16.get(), n, update.coefficients, o.rounding_seed,
                                  uint32_t(step), nullptr);
    } else {
      s3::cuda::adamw_update(d_p.get(), d_g.get(), d_m.get(), d_v.get(), n, update.coefficients, nullptr);
    }
  }
  const std::vector<float> p = d_p.download();
  CHECK_NMSE(std::string("adamw params, ") + (bf16 ? "bf16" : "f32") + " moments", p.data(), p_cpu.data(), n, 1e-14);
  std::printf("  adamw: %zu of %zu parameters differ in any bit\n", s3test::exact_mismatches(p, p_cpu), n);
  if (expect_exact) CHECK_EQ(s3test::exact_mismatches(p, p_cpu), size_t(0));
  if (expect_exact && bf16) {
    std::vector<uint16_t> m = d_m16.download(), v = d_v16.download();
    CHECK(m == state.m_bf16);
    CHECK(v == state.v_bf16);
  } else if (expect_exact) {
    CHECK(d_m.download() == state.m);
    CHECK(d_v.download() == state.v);
  }
}

}  // namespace

TEST(cuda_adamw_matches_the_cpu_step_bit_for_bit_without_clipping) {
  s3test::require_gpu();
  s3::train::AdamWOptions o;
  o.lr = 1e-3;
  o.weight_decay = 0.01;
  o.warmup_steps = 2;
  o.max_grad_norm = 0.0;  // no clipping: the norm's summation order cannot change the scale
  compare_adamw(o, true);
  o.state_dtype = s3::train::OptimizerStateDtype::Bf16;
  o.rounding_seed = 42;
  compare_adamw(o, true);
}

TEST(cuda_adamw_with_clipping_matches_the_cpu_step) {
  s3test::require_gpu();
  s3::train::AdamWOptions o;
  o.lr = 1e-3;
  o.max_grad_norm = 1.0;  // the gradients' norms (≈ 5.5, 11, 16) are clipped at every step
  compare_adamw(o, false);
}

namespace {

std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = s3::f32_to_bf16(v[i]);
  return out;
}

std::vector<float> rounded_to_bf16(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = s3::bf16_to_f32(s3::f32_to_bf16(v[i]));
  return out;
}

struct BackwardGemmResult {
  std::vector<float> dinp, dweight;
};

// One call of the device backward from f32 host operands (converted to bf16 bits for Bf16), with
// dweight starting from dweight0.
BackwardGemmResult device_backward(s3::cuda::MatmulBackward& gemm, const s3::cuda::Stream& stream, const std::vector<float>& dout,
                                   const std::vector<float>& inp, const std::vector<float>& w, const std::vector<float>& dweight0,
                                   int64_t M, int64_t N, int64_t K, s3::cuda::GemmDtype dtype) {
  DeviceArray<float> d_dinp(size_t(M * K)), d_dw(dweight0);
  BackwardGemmResult r;
  if (dtype == s3::cuda::GemmDtype::Bf16) {
    DeviceArray<uint16_t> d_dout(to_bf16(dout)), d_inp(to_bf16(inp)), d_w(to_bf16(w));
    gemm.run(d_dinp.get(), d_dw.get(), d_dout.get(), d_inp.get(), d_w.get(), M, N, K, dtype);
    stream.synchronize("backward GEMM");
  } else {
    DeviceArray<float> d_dout(dout), d_inp(inp), d_w(w);
    gemm.run(d_dinp.get(), d_dw.get(), d_dout.get(), d_inp.get(), d_w.get(), M, N, K, dtype);
    stream.synchronize("backward GEMM");
  }
  r.dinp = d_dinp.download();
  r.dweight = d_dw.download();
  return r;
}

}  // namespace

TEST(cuda_matmul_backward_matches_cpu) {
  s3test::require_cuda();
  s3::cuda::DeviceAllocator allocator("test");
  s3::cuda::Stream stream;
  s3::cuda::MatmulBackward gemm(s3::cuda::cublaslt().library, allocator, stream.get());
  s3::ThreadPool pool(2);
  // Small integers first: every product and sum is exact in f32 and bf16, so a wrong layout or
  // transpose cannot hide behind a tolerance.
  {
    const int64_t M = 7, N = 5, K = 3;
    auto ints = [](size_t n, int seed) {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; i++) v[i] = float(int((i * 7 + size_t(seed) * 13) % 9) - 4);
      return v;
    };
    const std::vector<float> dout = ints(size_t(M * N), 1), inp = ints(size_t(M * K), 2), w = ints(size_t(N * K), 3);
    const std::vector<float> dw0 = ints(size_t(N * K), 4);
    std::vector<float> want_dinp(size_t(M * K)), want_dw = dw0;
    s3::cpu::matmul_backward(want_dinp.data(), want_dw.data(), dout.data(), inp.data(), w.data(), M, N, K, pool);
    for (s3::cuda::GemmDtype dtype : {s3::cuda::GemmDtype::F32, s3::cuda::GemmDtype::Bf16}) {
      const BackwardGemmResult got = device_backward(gemm, stream, dout, inp, w, dw0, M, N, K, dtype);
      CHECK(got.dinp == want_dinp);
      CHECK(got.dweight == want_dw);
    }
  }
  // Qwen3-0.6B's shapes (o_proj, down_proj, q_proj) at a few token counts.
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{130, 1024, 2048}, {1, 1024, 3072}, {512, 2048, 1024}}) {
    const std::string shape = " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
    const std::vector<float> dout = s3test::random_floats(size_t(M * N), 20), inp = s3test::random_floats(size_t(M * K), 21);
    const std::vector<float> w = s3test::random_floats(size_t(N * K), 22, 0.05f), dw0 = s3test::random_floats(size_t(N * K), 23, 0.1f);
    for (s3::cuda::GemmDtype dtype : {s3::cuda::GemmDtype::F32, s3::cuda::GemmDtype::Bf16}) {
      const bool bf16 = dtype == s3::cuda::GemmDtype::Bf16;
      const std::vector<float> dout_r = bf16 ? rounded_to_bf16(dout) : dout, inp_r = bf16 ? rounded_to_bf16(inp) : inp;
      const std::vector<float> w_r = bf16 ? rounded_to_bf16(w) : w;
      std::vector<float> want_dinp(size_t(M * K)), want_dw = dw0;
      s3::cpu::matmul_backward(want_dinp.data(), want_dw.data(), dout_r.data(), inp_r.data(), w_r.data(), M, N, K, pool);
      const BackwardGemmResult got = device_backward(gemm, stream, dout, inp, w, dw0, M, N, K, dtype);
      const double threshold = bf16 ? 1e-7 : 1e-9;
      const std::string what = std::string(bf16 ? " bf16" : " f32") + shape;
      CHECK_NMSE("matmul_backward dinp" + what, got.dinp.data(), want_dinp.data(), got.dinp.size(), threshold);
      CHECK_NMSE("matmul_backward dweight" + what, got.dweight.data(), want_dw.data(), got.dweight.size(), threshold);
      const BackwardGemmResult again = device_backward(gemm, stream, dout, inp, w, dw0, M, N, K, dtype);
      CHECK_EQ(s3test::exact_mismatches(again.dinp, got.dinp), size_t(0));
      CHECK_EQ(s3test::exact_mismatches(again.dweight, got.dweight), size_t(0));
    }
  }
  CHECK_THROWS(s3::cuda::CudaError, gemm.run(nullptr, nullptr, nullptr, nullptr, nullptr, 1, 1, 1, s3::cuda::GemmDtype::Fp8));
}

#else

TEST(cuda_backward) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
