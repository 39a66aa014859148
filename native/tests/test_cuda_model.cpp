// test_cuda_model.cpp: the whole model on the device against the CPU, through the runners of
// engine/model_runner.h: logits of a sequence (prefilled in chunks on the device) for the tiny, small
// and Qwen3-0.6B shapes (the 0.6B one with 4 of its 28 layers) with f32, bf16 and FP8 weights. The
// CPU computes in f32 from the stored weights (its avx512bf16 and amx levels round the GEMM inputs
// to BF16 for BF16 and FP8 weights); the device rounds each GEMM's input to the weight's input type
// (bf16, or FP8 with 1 × 128 scales on sm_90), so the thresholds grow with that rounding: f32 NMSE
// ≤ 1e-6, bf16 ≤ 1e-2, fp8 ≤ 1e-1, each measured value printed. Scores (the device in chunks)
// against the CPU's: f32 |Δ log-prob| ≤ 1e-3, bf16 ≤ 0.5 (the reasons at compare_scores). The
// runner's description names the FP8 GEMM path only for FP8 weights. Skipped where CUDA is not usable.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "engine/model_runner.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

using s3::DType;
using s3::model::Device;
using s3::model::Qwen3Config;

namespace {

std::shared_ptr<const s3::model::Qwen3Weights> weights_of(const s3test::TestModel& model) {
  return std::make_shared<const s3::model::Qwen3Weights>(
      s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow, "test model"));
}

std::unique_ptr<s3::engine::ModelRunner> runner(Device device, const std::shared_ptr<const s3::model::Qwen3Weights>& weights,
                                                s3::ThreadPool& pool, int64_t max_batch_tokens) {
  s3::engine::RunnerOptions options;
  options.device = device;
  options.num_blocks = 4;
  options.max_batch_tokens = max_batch_tokens;
  return s3::engine::make_model_runner(options, weights, pool);
}

void compare_logits(const std::string& name, const Qwen3Config& config, DType matrix, DType vector, double threshold) {
  const s3test::TestModel model = s3test::make_test_model(config, matrix, 5, vector);
  const auto weights = weights_of(model);
  s3::ThreadPool pool(4);
  std::mt19937 rng(6);
  std::vector<int32_t> tokens(77);
  for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(config.vocab_size));
  const int64_t T = int64_t(tokens.size()), V = config.vocab_size;
  std::vector<float> cpu(size_t(T * V)), gpu(cpu.size());
  runner(Device::Cpu, weights, pool, 512)->logits(tokens.data(), T, 0, cpu.data());
  // Chunks of 32 positions on the device: prefill continuing a cached prefix.
  runner(Device::Cuda, weights, pool, 32)->logits(tokens.data(), T, 0, gpu.data());
  CHECK_NMSE("model logits " + name, gpu.data(), cpu.data(), cpu.size(), threshold);
  int64_t same_argmax = 0;
  for (int64_t t = 0; t < T; t++) {
    const float* a = &cpu[size_t(t * V)];
    const float* b = &gpu[size_t(t * V)];
    same_argmax += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
  }
  std::printf("  model logits %s: argmax agrees at %lld of %lld positions\n", name.c_str(), (long long)same_argmax, (long long)T);
}

// The log-probs runner.score gives each token after the first, CPU (one pass) against CUDA (chunks
// of 128 positions through a scratch cache, so positions 128 and 256 start chunks that attend to the
// earlier chunks' keys), on the `small` shape. The test model's logits are large (its tied N(0, 1)
// embeddings: log-probs of these tokens −70 to −210), so:
// - f32 weights: both sides compute in f32; measured between the CPU's SIMD levels (reductions in
//   other orders) |Δ| ≤ 6.1e-5, 4 ulps of a float near −150 (2026-12-05). 1e-3 leaves room for
//   the device's orders and catches any chunk-boundary error (a chunk that lost its predecessors'
//   keys, a RoPE offset or a target off by one moves a log-prob by 1 or far more).
// - bf16 weights: the device rounds every GEMM input to BF16, the CPU at the avx512bf16 and amx
//   levels too and elsewhere multiplies exact f32 products; on this model that alone moves
//   log-probs by up to 0.248 (mean 0.063; the avx512bf16 level against avx512 on one CPU,
//   2026-12-05), and the H200 measured 0.242 against its amx CPU (2026-12-04). Threshold 0.5.
void compare_scores(const std::string& name, DType dtype, double threshold) {
  const s3test::TestModel model = s3test::make_test_model(s3test::small_qwen3_config(), dtype, 7, dtype == DType::F32 ? DType::F32 : DType::BF16);
  const auto weights = weights_of(model);
  s3::ThreadPool pool(4);
  std::vector<int32_t> tokens(300);
  for (size_t i = 0; i < tokens.size(); i++) tokens[i] = int32_t((i * 7919 + 3) % 4096);
  const std::vector<float> cpu = runner(Device::Cpu, weights, pool, 512)->score(tokens.data(), int64_t(tokens.size()));
  const std::vector<float> gpu = runner(Device::Cuda, weights, pool, 128)->score(tokens.data(), int64_t(tokens.size()));
  CHECK_EQ(cpu.size(), tokens.size() - 1);
  CHECK_EQ(gpu.size(), cpu.size());
  // The largest difference in each chunk of the device's, and the mean.
  double chunk_worst[3] = {0.0, 0.0, 0.0}, sum = 0.0;
  for (size_t i = 0; i < cpu.size(); i++) {
    const double difference = std::fabs(double(gpu[i]) - double(cpu[i]));
    chunk_worst[i / 128] = s3test::max_or_nan(chunk_worst[i / 128], difference);
    sum += difference;
  }
  const double worst = s3test::max_or_nan(s3test::max_or_nan(chunk_worst[0], chunk_worst[1]), chunk_worst[2]);
  std::printf("  score %s: largest |log-prob difference| %.3g (positions 0-127 %.3g, 128-255 %.3g, 256-298 %.3g), mean %.3g (threshold %.3g)\n",
              name.c_str(), worst, chunk_worst[0], chunk_worst[1], chunk_worst[2], sum / double(cpu.size()), threshold);
  CHECK(worst <= threshold);
}

}  // namespace

TEST(cuda_model_logits_match_the_cpu_tiny_and_small) {
  s3test::require_cuda();
  compare_logits("tiny f32", s3test::tiny_qwen3_config(), DType::F32, DType::F32, 1e-6);
  compare_logits("tiny bf16", s3test::tiny_qwen3_config(), DType::BF16, DType::BF16, 1e-2);
  compare_logits("small f32", s3test::small_qwen3_config(), DType::F32, DType::F32, 1e-6);
  compare_logits("small bf16", s3test::small_qwen3_config(), DType::BF16, DType::BF16, 1e-2);
  compare_logits("small fp8", s3test::small_qwen3_config(), DType::F8_E4M3, DType::BF16, 1e-1);
}

TEST(cuda_model_logits_match_the_cpu_on_the_qwen3_06b_shape) {
  s3test::require_cuda();
  compare_logits("qwen3-0.6b x4 layers bf16", s3test::qwen3_06b_config(4), DType::BF16, DType::BF16, 1e-2);
  compare_logits("qwen3-0.6b x4 layers fp8", s3test::qwen3_06b_config(4), DType::F8_E4M3, DType::BF16, 1e-1);
}

TEST(cuda_model_scores_match_the_cpu) {
  s3test::require_cuda();
  compare_scores("f32", DType::F32, 1e-3);
  compare_scores("bf16", DType::BF16, 0.5);
}

// The runner's GEMM line names the FP8 path (the form cuBLASLt accepted, or its refusal and the
// widening) only when the weights hold FP8 matrices; f32 and bf16 runs do not carry the FP8 probe's
// outcome into `swarm train`'s and the bench's lines.
TEST(cuda_runner_names_the_fp8_gemm_path_only_for_fp8_weights) {
  s3test::require_cuda();
  s3::ThreadPool pool(2);
  for (const DType dtype : {DType::F32, DType::BF16, DType::F8_E4M3}) {
    const s3test::TestModel model = s3test::make_test_model(s3test::small_qwen3_config(), dtype, 3, dtype == DType::F32 ? DType::F32 : DType::BF16);
    const std::string gemm = runner(Device::Cuda, weights_of(model), pool, 32)->describe().gemm;
    std::printf("  %s weights: %s\n", s3::dtype_name(dtype), gemm.c_str());
    CHECK_EQ(gemm.find("fp8") != std::string::npos, dtype == DType::F8_E4M3);
  }
}
