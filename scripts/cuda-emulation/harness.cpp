// harness.cpp: runs the emulated tensor-core training attention (emulate.py's translation of
// native/cuda/attention_train_mma.cu) against the CPU trainer's attention on packed batches with
// shared prefixes, and prints each output's NMSE; exits non-zero past 1e-4 (the GPU test's bound)
// or when two runs differ in a bit.
#include <cstdio>
#include <random>
#include <string>

#include "attention_train_mma_host.h"
#include "core/thread_pool.h"
#include "cpu/attention_backward.h"

namespace {

using namespace s3::cuda;

std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double error = 0, norm = 0;
  for (size_t i = 0; i < got.size(); i++) {
    if (!std::isfinite(got[i])) return INFINITY;
    error += (double(got[i]) - want[i]) * (double(got[i]) - want[i]), norm += double(want[i]) * want[i];
  }
  return norm > 0 ? error / norm : error;
}

template <int HD>
std::vector<std::vector<float>> run_emulated(const DevicePackedAttention& shape, const std::vector<float>& q, const std::vector<float>& k,
                                             const std::vector<float>& v, const std::vector<float>& dout,
                                             const std::vector<float>& cpu_out, const std::vector<float>& cpu_lse) {
  const Dims dm = dims_of(shape);
  // The launchers' f32_to_bf16 copies (round to nearest even).
  auto bf16 = [](const std::vector<float>& x) {
    std::vector<uint16_t> bits(x.size());
    for (size_t i = 0; i < x.size(); i++) bits[i] = s3::f32_to_bf16(x[i]);
    return bits;
  };
  const std::vector<uint16_t> qb = bf16(q), kb = bf16(k), vb = bf16(v), dob = bf16(dout);
  const size_t qn = q.size(), kn = k.size(), T = size_t(shape.T), NH = size_t(shape.NH);
  std::vector<float> out(qn, NAN), lse(T * NH, NAN), dq(qn, NAN), dk(kn, NAN), dv(kn, NAN), delta(T * NH);
  for (size_t row = 0; row < T * NH; row++) {  // attention_row_deltas, on the CPU's out
    float sum = 0;
    for (int d = 0; d < HD; d++) sum += dout[row * HD + d] * cpu_out[row * HD + d];
    delta[row] = sum;
  }
  const unsigned blocks = unsigned((shape.T + kBlockRows - 1) / kBlockRows);
  emu::launch(blocks, unsigned(shape.NH), kThreads, 2 * kForwardKeys * kRowBytes<HD>,
              [&] { forward_kernel<HD>(out.data(), lse.data(), qb.data(), kb.data(), vb.data(), dm); });
  emu::launch(blocks, unsigned(shape.NH), kThreads, 2 * kDqKeys * kRowBytes<HD>, [&] {
    dq_kernel<HD>(dq.data(), dob.data(), cpu_lse.data(), delta.data(), qb.data(), kb.data(), vb.data(), dm);
  });
  emu::launch(blocks, unsigned(shape.NKV), kThreads, 2 * (kBlockRows + kDkvQueries) * kRowBytes<HD>, [&] {
    dkdv_kernel<HD>(dk.data(), dv.data(), dob.data(), cpu_lse.data(), delta.data(), qb.data(), kb.data(), vb.data(), dm);
  });
  return {out, lse, dq, dk, dv};
}

bool check(const std::vector<int64_t>& begins, const std::vector<int64_t>& parent, int64_t NH, int64_t NKV, int64_t HD,
           const std::string& name) {
  const int64_t n_seq = int64_t(begins.size()) - 1, T = begins.back();
  s3::cpu::PackedAttentionShape cpu_shape{T, NH, NKV, HD, begins.data(), n_seq, 64};
  if (!parent.empty()) cpu_shape.seq_parent = parent.data();
  const size_t qn = size_t(T * NH * HD), kn = size_t(T * NKV * HD);
  const std::vector<float> q = random_floats(qn, 1, 1.5f), k = random_floats(kn, 2, 1.5f), v = random_floats(kn, 3, 1.0f);
  const std::vector<float> dout = random_floats(qn, 4, 1.0f);
  s3::ThreadPool pool(2);
  std::vector<float> out(qn), lse(size_t(T * NH)), dq(qn), dk(kn), dv(kn);
  s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), cpu_shape, pool);
  s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(), k.data(),
                                     v.data(), cpu_shape, pool);
  const DevicePackedAttention shape{T, NH, NKV, HD, begins.data(), parent.empty() ? nullptr : parent.data(), n_seq};
  auto run = [&] {
    switch (HD) {
      case 16: return run_emulated<16>(shape, q, k, v, dout, out, lse);
      case 32: return run_emulated<32>(shape, q, k, v, dout, out, lse);
      case 64: return run_emulated<64>(shape, q, k, v, dout, out, lse);
      default: return run_emulated<128>(shape, q, k, v, dout, out, lse);
    }
  };
  const auto got = run(), again = run();
  const std::vector<float>* want[] = {&out, &lse, &dq, &dk, &dv};
  const char* what[] = {"out", "lse", "dq", "dk", "dv"};
  bool ok = true;
  std::printf("%-16s T %4lld NH %2lld NKV %2lld HD %3lld:", name.c_str(), (long long)T, (long long)NH, (long long)NKV, (long long)HD);
  for (int i = 0; i < 5; i++) {
    const double e = nmse(got[size_t(i)], *want[i]);
    const bool same = std::memcmp(got[size_t(i)].data(), again[size_t(i)].data(), got[size_t(i)].size() * 4) == 0;
    std::printf("  %s %.2e%s", what[i], e, same ? "" : " (runs differ)");
    ok = ok && e <= 1e-4 && same;
  }
  std::printf("  %s\n", ok ? "ok" : "FAIL");
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  ok &= check({0, 37, 150, 155}, {}, 4, 2, 128, "independent");
  ok &= check({0, 150, 170, 171, 211, 260}, {-1, 0, 0, -1, 0}, 4, 2, 128, "shared prefix");
  ok &= check({0, 20, 45, 90, 91}, {-1, 0, -1, 2}, 8, 1, 64, "group of 8");
  ok &= check({0, 70, 73, 80, 81, 95, 130, 131, 200}, {-1, 0, -1, 0, 2, 0, -1, 6}, 8, 4, 32, "short sequences");
  ok &= check({0, 65, 129, 200}, {-1, 0, 0}, 4, 4, 16, "head_dim 16");
  return ok ? 0 : 1;
}
