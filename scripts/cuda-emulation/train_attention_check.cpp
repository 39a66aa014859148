// train_attention_check.cpp (emulate.py train-attention): the training attention's CUDA launchers,
// tensor-core (cuda/attention_train_mma.h) and f32 (cuda/attention_backward.h), run in the CPU
// emulation on host memory against the CPU trainer's attention (cpu/attention_backward.h), on the
// GPU test's packed batches. Prints each output's NMSE and exits non-zero past the GPU test's bounds
// (tensor cores: out, lse 1e-4, gradients 3e-4; f32: 1e-7) or when two runs differ in a bit.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/attention_backward.h"
#include "cuda/attention_backward.h"
#include "cuda/attention_train_mma.h"

namespace {

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

bool check(const std::vector<int64_t>& begins, const std::vector<int64_t>& parent, int64_t NH, int64_t NKV, int64_t HD,
           const std::string& name, bool tensor_cores) {
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
  const s3::cuda::DevicePackedAttention shape{T, NH, NKV, HD, begins.data(), parent.empty() ? nullptr : parent.data(), n_seq};
  auto run = [&] {
    std::vector<float> o(qn, NAN), l(size_t(T * NH), NAN), gq(qn, NAN), gk(kn, NAN), gv(kn, NAN);
    std::vector<uint8_t> scratch(tensor_cores ? s3::cuda::attention_train_mma_scratch_bytes(T, NH, NKV, HD)
                                              : s3::cuda::attention_backward_scratch_bytes(T, NH));
    if (tensor_cores) {
      s3::cuda::causal_attention_train_forward_mma(o.data(), l.data(), q.data(), k.data(), v.data(), shape, scratch.data(), nullptr);
      // The backward reads the CPU's out and lse, as the GPU test does.
      s3::cuda::causal_attention_backward_mma(gq.data(), gk.data(), gv.data(), dout.data(), out.data(), lse.data(), q.data(),
                                              k.data(), v.data(), shape, scratch.data(), nullptr);
    } else {
      s3::cuda::causal_attention_train_forward(o.data(), l.data(), q.data(), k.data(), v.data(), shape, nullptr);
      s3::cuda::causal_attention_backward(gq.data(), gk.data(), gv.data(), dout.data(), out.data(), lse.data(), q.data(), k.data(),
                                          v.data(), shape, scratch.data(), nullptr);
    }
    return std::vector<std::vector<float>>{o, l, gq, gk, gv};
  };
  const auto got = run(), again = run();
  const std::vector<float>* want[] = {&out, &lse, &dq, &dk, &dv};
  const char* what[] = {"out", "lse", "dq", "dk", "dv"};
  bool ok = true;
  std::printf("%-12s %-16s T %4lld NH %2lld NKV %2lld HD %3lld:", tensor_cores ? "tensor cores" : "f32", name.c_str(), (long long)T,
              (long long)NH, (long long)NKV, (long long)HD);
  for (int i = 0; i < 5; i++) {
    const double e = nmse(got[size_t(i)], *want[i]);
    const bool same = std::memcmp(got[size_t(i)].data(), again[size_t(i)].data(), got[size_t(i)].size() * 4) == 0;
    const double bound = !tensor_cores ? 1e-7 : i < 2 ? 1e-4 : 3e-4;
    std::printf("  %s %.2e%s", what[i], e, same ? "" : " (runs differ)");
    ok = ok && e <= bound && same;
  }
  std::printf("  %s\n", ok ? "ok" : "FAIL");
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  for (bool tensor_cores : {true, false}) {
    ok &= check({0, 37, 150, 155}, {}, 4, 2, 128, "independent", tensor_cores);
    ok &= check({0, 150, 170, 171, 211, 260}, {-1, 0, 0, -1, 0}, 4, 2, 128, "shared prefix", tensor_cores);
    ok &= check({0, 20, 45, 90, 91}, {-1, 0, -1, 2}, 8, 1, 64, "group of 8", tensor_cores);
    ok &= check({0, 70, 73, 80, 81, 95, 130, 131, 200}, {-1, 0, -1, 0, 2, 0, -1, 6}, 8, 4, 32, "short sequences", tensor_cores);
    ok &= check({0, 65, 129, 200}, {-1, 0, 0}, 4, 4, 16, "head_dim 16", tensor_cores);
  }
  return ok ? 0 : 1;
}
