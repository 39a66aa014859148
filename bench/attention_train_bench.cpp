// attention_train_bench.cpp: times the training attention (native/cpu/attention_backward.h), its
// forward and its backward, on one Qwen3-0.6B layer's shape at 2,048 tokens (16 query heads, 8 KV
// heads, head size 128, one causal sequence) with BF16 products (precision.train: bf16) at the
// machine's level (S3_SIMD caps it), or f32 products. Prints each repetition and a fingerprint of
// dQ and dK, so builds can be compared for their bits as well as their time.
//
// Build (from the repository root, after a CMake build of the static library):
//   g++ -std=c++17 -O3 -Inative bench/attention_train_bench.cpp build-cpu/libs3_core.a -lpthread -ldl -o attention_train_bench
// Run: ./attention_train_bench [threads] [repetitions] [bf16|f32]   (defaults 2, 3, bf16)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/attention_backward.h"

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? size_t(std::atoi(argv[1])) : 2;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 3;
  const bool bf16 = argc <= 3 || std::strcmp(argv[3], "f32") != 0;
  s3::ThreadPool pool(threads);
  const int64_t T = 2048, NH = 16, NKV = 8, HD = 128;
  const std::vector<int64_t> begins = {0, T};
  const s3::cpu::PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 1, 64};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(size_t(T * NH * HD)), k(size_t(T * NKV * HD)), v(k.size()), dout(q.size());
  for (std::vector<float>* x : {&q, &k, &v, &dout}) {
    for (float& e : *x) e = normal(rng);
  }
  std::vector<float> out(q.size()), lse(size_t(T * NH)), dq(q.size()), dk(k.size()), dv(v.size());
  const s3::cpu::AttentionTrainPrecision precision =
      s3::cpu::attention_train_precision(bf16 ? s3::MatmulPrecision::Bf16 : s3::MatmulPrecision::F32);
  std::printf("threads %zu, level %s, %s products\n", threads, s3::simd_level_name(s3::cpu_info().level), bf16 ? "bf16" : "f32");
  // Causal FLOPs of the forward (QKᵀ and PV over T²/2 pairs per head); the backward is 2.5 of them.
  const double forward_flops = 4.0 * double(T) * double(T) / 2.0 * double(HD) * double(NH);
  for (int r = 0; r < repetitions; r++) {
    const auto t0 = std::chrono::steady_clock::now();
    s3::cpu::causal_attention_train_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), shape, pool, precision);
    const auto t1 = std::chrono::steady_clock::now();
    s3::cpu::causal_attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(),
                                       k.data(), v.data(), shape, pool, precision);
    const auto t2 = std::chrono::steady_clock::now();
    const double f = std::chrono::duration<double>(t1 - t0).count(), b = std::chrono::duration<double>(t2 - t1).count();
    uint64_t fingerprint = 1469598103934665603ull;
    for (const std::vector<float>* x : {&out, &dq, &dk, &dv}) {
      for (float e : *x) {
        uint32_t bits;
        std::memcpy(&bits, &e, 4);
        fingerprint = (fingerprint ^ bits) * 1099511628211ull;
      }
    }
    std::printf("forward %6.1f ms (%4.0f GFLOP/s)  backward %6.1f ms (%4.0f GFLOP/s)  bits %016llx\n", f * 1e3,
                forward_flops / f / 1e9, b * 1e3, 2.5 * forward_flops / b / 1e9, (unsigned long long)fingerprint);
  }
}
