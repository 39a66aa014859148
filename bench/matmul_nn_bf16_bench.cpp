// matmul_nn_bf16_bench.cpp: times the trainer's BF16-product C = A·B (native/cpu/matmul_nn_bf16.h)
// on the backward products of one Qwen3-0.6B MLP layer at 2,048 tokens: dX = dY · W (A row-major)
// and dW = dYᵀ · X (A read transposed), and the LM head's weight gradient for one chunk of 256
// rows (dW += dlogitsᵀ · h, A 151,936 rows tall, accumulated as the loss does), at the machine's
// level (S3_SIMD caps it). Best of five 0.3 s batches per shape.
//
// Build (from the repository root, after a CMake build of the static library):
//   g++ -std=c++17 -O3 -Inative bench/matmul_nn_bf16_bench.cpp build-cpu/libs3_core.a -lpthread -ldl -o matmul_nn_bf16_bench
// Run: ./matmul_nn_bf16_bench [threads]   (default 2)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/matmul_nn_bf16.h"

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? size_t(std::atoi(argv[1])) : 2;
  s3::ThreadPool pool(threads);
  std::printf("threads %zu, level %s\n", threads, s3::simd_level_name(s3::cpu_info().level));
  struct Shape {
    const char* name;
    int64_t M, N, K;
    bool a_transposed, accumulate;
  } shapes[] = {{"dX  2048x1024 <- 2048x3072 . 3072x1024", 2048, 1024, 3072, false, false},
                {"dX  2048x3072 <- 2048x1024 . 1024x3072", 2048, 3072, 1024, false, false},
                {"dW  3072x1024 <- (2048x3072)T . 2048x1024", 3072, 1024, 2048, true, false},
                {"dW  1024x3072 <- (2048x1024)T . 2048x3072", 1024, 3072, 2048, true, false},
                {"dW  151936x1024 += (256x151936)T . 256x1024", 151936, 1024, 256, true, true}};
  for (const Shape& s : shapes) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> a(size_t(s.M * s.K)), b(size_t(s.K * s.N)), c(size_t(s.M * s.N));
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    s3::cpu::MatmulNnArgs args = s3::cpu::matmul_nn_args(c.data(), a.data(), b.data(), s.M, s.N, s.K, s.accumulate);
    if (s.a_transposed) args.a_row = 1, args.a_col = s.M;  // A stored [K × M]
    double best = 1e30;
    for (int batch = 0; batch < 5; batch++) {
      const auto start = std::chrono::steady_clock::now();
      int calls = 0;
      double seconds = 0.0;
      while (seconds < 0.3) {
        s3::cpu::matmul_nn_bf16(args, pool);
        calls++;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      best = std::min(best, seconds / calls);
    }
    std::printf("%-46s %7.2f ms %6.0f GFLOP/s\n", s.name, best * 1e3, 2.0 * double(s.M * s.N * s.K) / best / 1e9);
  }
}
