// head_loss_bench.cpp: times the trainer's fused LM-head loss (native/train/losses.h: the logits
// product, each row's softmax and gradient, dh and dhead) on Qwen3-0.6B's head at 2,048 tokens
// (hidden 1,024, vocabulary 151,936, SFT loss on every row) with f32 or BF16 products (precision.train)
// at the machine's level (S3_SIMD caps it). Prints each repetition with a fingerprint of the loss,
// dh and dhead, so builds can be compared for their bits as well as their time.
//
// Build (from the repository root, after a CMake build of the static library):
//   g++ -std=c++17 -O3 -Inative bench/head_loss_bench.cpp build-cpu/libs3_core.a -lpthread -ldl -o head_loss_bench
// Run: ./head_loss_bench [threads] [repetitions] [bf16|f32]   (defaults 2, 3, bf16)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "train/losses.h"

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? size_t(std::atoi(argv[1])) : 2;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 3;
  const bool bf16 = argc <= 3 || std::strcmp(argv[3], "f32") != 0;
  s3::ThreadPool pool(threads);
  const int64_t T = 2048, C = 1024, V = 151936;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> h(size_t(T * C)), head(size_t(V * C));
  for (float& x : h) x = normal(rng);
  for (float& x : head) x = 0.03f * normal(rng);  // logits of about unit size, as a trained head's
  std::vector<int32_t> targets(static_cast<size_t>(T));
  for (int32_t& t : targets) t = int32_t(rng() % uint32_t(V));
  const std::vector<float> coef(size_t(T), 1.0f / float(T));
  s3::train::LossInputs inputs;
  inputs.targets = targets.data();
  inputs.coef = coef.data();
  s3::train::LossOptions options;
  options.precision = bf16 ? s3::MatmulPrecision::Bf16 : s3::MatmulPrecision::F32;
  std::vector<float> dh(h.size()), dhead(head.size());
  s3::train::HeadLossScratch scratch;
  std::printf("threads %zu, level %s, %s products\n", threads, s3::simd_level_name(s3::cpu_info().level), bf16 ? "bf16" : "f32");
  const double flops = 6.0 * double(T) * double(C) * double(V);  // three products of T × C × V
  for (int r = 0; r < repetitions; r++) {
    std::fill(dhead.begin(), dhead.end(), 0.0f);
    const auto t0 = std::chrono::steady_clock::now();
    const s3::train::LossStats stats =
        s3::train::fused_head_loss(dh.data(), dhead.data(), h.data(), head.data(), T, C, V, inputs, options, pool, &scratch);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t fingerprint = 1469598103934665603ull;
    const auto mix = [&](const void* data, size_t bytes) {
      const unsigned char* p = static_cast<const unsigned char*>(data);
      for (size_t i = 0; i < bytes; i += 4) {
        uint32_t word;
        std::memcpy(&word, p + i, 4);
        fingerprint = (fingerprint ^ word) * 1099511628211ull;
      }
    };
    mix(&stats.loss, sizeof stats.loss);
    mix(dh.data(), dh.size() * sizeof(float));
    mix(dhead.data(), dhead.size() * sizeof(float));
    std::printf("loss %.17g  %6.3f s (%4.0f GFLOP/s of products)  bits %016llx\n", stats.loss, seconds, flops / seconds / 1e9,
                (unsigned long long)fingerprint);
  }
}
