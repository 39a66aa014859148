// train_pass_bench.cpp: times the trainer's pass (native/model/qwen3_train.h: the training forward and
// the backward to every parameter, without the LM-head loss: a fixed random gradient of the final
// normed hidden states) on a checkpoint at 2,048 tokens, alternating in one process a forward that
// keeps every layer's activations and one that keeps none (the backward recomputing each layer), so
// the two compare on the same host state. Prints the times and a fingerprint of the gradients, which
// must be the same for both. BF16 products (precision.train: bf16) by default, at the machine's level
// (S3_SIMD caps it).
//
// Build (from the repository root, after a CMake build of the static library):
//   g++ -std=c++17 -O3 -Inative bench/train_pass_bench.cpp build-cpu/libs3_core.a -lpthread -ldl -o train_pass_bench
// Run: ./train_pass_bench CHECKPOINT_DIR [rounds] [bf16|f32] [threads]   (defaults 4, bf16, 2)
// e.g. the random Qwen3-0.6B checkpoint `swarm bench train --shape qwen3-0.6b` made under the OS temp folder.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "model/qwen3_train.h"
#include "model/qwen3_weights.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: train_pass_bench CHECKPOINT_DIR [rounds] [bf16|f32] [threads]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 4;
  const s3::MatmulPrecision precision =
      argc > 3 && std::strcmp(argv[3], "f32") == 0 ? s3::MatmulPrecision::F32 : s3::MatmulPrecision::Bf16;
  s3::ThreadPool pool(argc > 4 ? size_t(std::atoi(argv[4])) : 2);
  const s3::model::Qwen3Weights weights = s3::model::Qwen3Weights::load(argv[1]);
  const s3::model::Qwen3Config& c = weights.config();
  const s3::model::Qwen3ParamLayout layout = s3::model::Qwen3ParamLayout::make(c);
  const std::vector<float> params = s3::model::qwen3_params_from_weights(weights, layout);
  std::vector<float> grads(layout.total);
  const int64_t T = 2048;
  std::mt19937 rng(1);
  std::vector<int32_t> tokens(static_cast<size_t>(T));
  for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(c.vocab_size));
  const std::vector<int64_t> begins = {0, T};
  const s3::model::Qwen3TrainBatch batch{tokens.data(), T, begins.data(), 1};
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<float> d_final(size_t(T * c.hidden_size));
  for (float& x : d_final) x = normal(rng);
  const size_t needed = s3::model::qwen3_train_activation_bytes(c, T);
  std::printf("threads %zu, level %s, %s products; activations %.2f GB\n", pool.num_threads(),
              s3::simd_level_name(s3::cpu_info().level), precision == s3::MatmulPrecision::Bf16 ? "bf16" : "f32",
              double(needed) / 1e9);
  s3::model::Qwen3TrainState kept, recomputed;  // each keeps its own buffers between rounds
  for (int r = 0; r < rounds; r++) {
    for (const bool keep : {true, false}) {
      s3::model::Qwen3TrainState& state = keep ? kept : recomputed;
      std::fill(grads.begin(), grads.end(), 0.0f);
      const auto t0 = std::chrono::steady_clock::now();
      s3::model::qwen3_train_forward(c, layout, params.data(), batch, state, pool, precision, keep ? needed : 0);
      const auto t1 = std::chrono::steady_clock::now();
      s3::model::qwen3_train_backward(c, layout, params.data(), grads.data(), batch, state, d_final.data(), pool);
      const auto t2 = std::chrono::steady_clock::now();
      uint64_t fingerprint = 1469598103934665603ull;
      for (float g : grads) {
        uint32_t bits;
        std::memcpy(&bits, &g, 4);
        fingerprint = (fingerprint ^ bits) * 1099511628211ull;
      }
      const auto seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
      std::printf("round %d %-10s forward %6.2f s  backward %6.2f s  pass %6.2f s  bits %016llx\n", r,
                  keep ? "kept" : "recomputed", seconds(t0, t1), seconds(t1, t2), seconds(t0, t2),
                  (unsigned long long)fingerprint);
    }
  }
}
