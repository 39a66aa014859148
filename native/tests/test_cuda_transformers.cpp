// test_cuda_transformers.cpp: our logits and gradients against an implementation nobody here wrote. The GPU check
// (scripts/gpu-check.sh) saves randomly initialised transformers Qwen3ForCausalLM models with
// save_pretrained (bf16) and, beside each, reference.safetensors: the token ids and the logits
// transformers computes for them on the same GPU in bf16 and in f32. Here each folder named in
// S3_HF_CHECK_DIRS (colon-separated) is loaded by our loader and run by the CPU runner (needs no GPU:
// at SIMD levels with f32 products NMSE ≤ 1e-9 against transformers' f32, measured 4e-13 on small and
// 2e-12 on the 0.6B shape; at the avx512bf16 and amx levels, whose matmuls round their input to BF16
// for BF16 weights, the CUDA runner's 1e-3, measured 1.7e-5 on small at the amx level of the H200
// host's Xeon, 2026-12-04) and the CUDA runner (bf16 GEMM inputs: no
// further from transformers' f32 than transformers' own bf16 run is, or NMSE ≤ 1e-3), with the
// argmax agreement printed. Where a folder also holds gradients.safetensors (transformers_gradients.py:
// autograd of the weighted SFT loss over two sequences, in f32 and under bf16 autocast), the trainer's
// gradients for the same loss: the CPU trainer's and the CUDA trainer's with f32 products NMSE ≤ 1e-8
// per parameter against transformers' f32 (the CPU trainer's measured 2e-12 to 8e-12), the CUDA trainer's with BF16 products (all parameters
// together) no further from transformers' f32 than transformers' own bf16 autocast is, or ≤ 1e-3.
// Skipped when the variable is unset or CUDA is not usable (the CPU trainer's check needs no GPU).
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/safetensors.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "engine/model_runner.h"
#include "train/trainer.h"
#include "tests/cuda_test_support.h"

namespace {

std::vector<float> f32_tensor(const s3::SafetensorsFile& file, const std::string& name) {
  const s3::TensorInfo& info = file.info(name);
  if (info.dtype != s3::DType::F32) throw s3test::TestFailure{name + " is not F32"};
  std::vector<float> values(info.nbytes / 4);
  std::memcpy(values.data(), info.data, info.nbytes);
  return values;
}

double argmax_agreement(const std::vector<float>& a, const std::vector<float>& b, int64_t T, int64_t V) {
  int64_t same = 0;
  for (int64_t t = 0; t < T; t++) {
    same += std::max_element(a.begin() + t * V, a.begin() + (t + 1) * V) - (a.begin() + t * V) ==
            std::max_element(b.begin() + t * V, b.begin() + (t + 1) * V) - (b.begin() + t * V);
  }
  return double(same) / double(T);
}

// The folders of S3_HF_CHECK_DIRS that hold `file`; skips the test when there are none.
std::vector<std::string> reference_dirs(const char* file) {
  const char* dirs = std::getenv("S3_HF_CHECK_DIRS");
  if (dirs == nullptr || dirs[0] == '\0') SKIP("S3_HF_CHECK_DIRS is not set (scripts/gpu-check.sh sets it)");
  std::vector<std::string> found;
  std::stringstream list(dirs);
  std::string dir;
  while (std::getline(list, dir, ':')) {
    if (!dir.empty() && std::ifstream(dir + "/" + file).good()) found.push_back(dir);
  }
  if (found.empty()) SKIP(std::string("no folder of S3_HF_CHECK_DIRS holds ") + file);
  return found;
}

// The weighted SFT loss transformers_gradients.py differentiated, as a packed micro-batch.
s3::train::TrainBatch reference_batch(const s3::SafetensorsFile& reference) {
  const s3::TensorInfo& ids = reference.info("ids");
  const std::vector<float> coef = f32_tensor(reference, "coef");
  const int64_t S = ids.shape.at(0), T = ids.shape.at(1);
  s3::train::TrainBatch batch;
  batch.tokens.resize(size_t(S * T));
  std::memcpy(batch.tokens.data(), ids.data, ids.nbytes);
  batch.seq_lengths.assign(size_t(S), T);
  for (int64_t s = 0; s < S; s++) {
    for (int64_t t = 0; t < T; t++) batch.coef.push_back(t + 1 < T ? coef[size_t(s * (T - 1) + t)] : 0.0f);
  }
  return batch;
}

// The trainer's gradients for the reference loss on `device` with `precision`, and its loss.
std::pair<std::vector<float>, double> trainer_gradients(const std::string& dir, s3::model::Device device,
                                                        s3::MatmulPrecision precision, const s3::SafetensorsFile& reference) {
  s3::train::TrainerOptions options;
  options.device = device;
  options.matmul_precision = precision;
  s3::train::Trainer trainer(dir, options);
  const double loss = trainer.accumulate(reference_batch(reference)).loss;
  return {trainer.grads(), loss};
}

// transformers' gradients under `prefix` in the trainer's layout.
std::vector<float> reference_gradients(const s3::SafetensorsFile& reference, const std::string& prefix,
                                       const s3::model::Qwen3ParamLayout& layout) {
  std::vector<float> out(layout.total);
  for (const auto& e : layout.entries) {
    const std::vector<float> g = f32_tensor(reference, prefix + "." + e.name);
    if (g.size() != e.count) throw s3test::TestFailure{prefix + "." + e.name + " has the wrong size"};
    std::copy(g.begin(), g.end(), out.begin() + std::ptrdiff_t(e.offset));
  }
  return out;
}

void check_f32_gradients(s3::model::Device device) {
  for (const std::string& dir : reference_dirs("gradients.safetensors")) {
    const s3::SafetensorsFile reference = s3::SafetensorsFile::open(dir + "/gradients.safetensors");
    const auto layout = s3::model::Qwen3ParamLayout::make(s3::model::Qwen3Weights::load(dir).config());
    const auto [grads, loss] = trainer_gradients(dir, device, s3::MatmulPrecision::F32, reference);
    const std::vector<float> want = reference_gradients(reference, "f32", layout);
    const double hf_loss = f32_tensor(reference, "f32.loss")[0];
    std::printf("  %s: loss %.9g, transformers f32 %.9g\n", dir.c_str(), loss, hf_loss);
    CHECK(std::fabs(loss - hf_loss) <= 1e-5 * std::fabs(hf_loss));
    const std::string where = dir + (device == s3::model::Device::Cpu ? " cpu trainer " : " cuda trainer ");
    for (const auto& e : layout.entries) {
      CHECK_NMSE(where + e.name + " vs transformers f32", grads.data() + e.offset, want.data() + e.offset, e.count, 1e-8);
    }
  }
}

}  // namespace

TEST(cpu_trainer_gradients_match_transformers_autograd) { check_f32_gradients(s3::model::Device::Cpu); }

TEST(cuda_trainer_gradients_match_transformers_autograd) {
  const std::vector<std::string> dirs = reference_dirs("gradients.safetensors");
  s3test::require_cuda();
  check_f32_gradients(s3::model::Device::Cuda);
  for (const std::string& dir : dirs) {
    const s3::SafetensorsFile reference = s3::SafetensorsFile::open(dir + "/gradients.safetensors");
    const auto layout = s3::model::Qwen3ParamLayout::make(s3::model::Qwen3Weights::load(dir).config());
    const std::vector<float> f32 = reference_gradients(reference, "f32", layout);
    const std::vector<float> hf_bf16 = reference_gradients(reference, "bf16", layout);
    const std::vector<float> ours = trainer_gradients(dir, s3::model::Device::Cuda, s3::MatmulPrecision::Bf16, reference).first;
    const double hf_own = s3test::nmse(hf_bf16.data(), f32.data(), f32.size());
    std::printf("  %s: transformers bf16 autocast vs its f32 gradients: nmse %.3g\n", dir.c_str(), hf_own);
    CHECK_NMSE(dir + " cuda trainer bf16 gradients vs transformers f32", ours.data(), f32.data(), f32.size(), std::max(1e-3, hf_own));
  }
}

// Each folder's ids, transformers' logits, and the logits of our runner on `device`.
struct LogitsCase {
  std::string dir;
  std::vector<float> hf_bf16, hf_f32, ours;
  int64_t T = 0, V = 0;
};

std::vector<LogitsCase> logits_cases(s3::model::Device device) {
  std::vector<LogitsCase> cases;
  s3::ThreadPool pool(8);
  for (const std::string& dir : reference_dirs("reference.safetensors")) {
    const auto weights = std::make_shared<const s3::model::Qwen3Weights>(s3::model::Qwen3Weights::load(dir));
    const s3::SafetensorsFile reference = s3::SafetensorsFile::open(dir + "/reference.safetensors");
    const s3::TensorInfo& ids_info = reference.info("ids");
    std::vector<int32_t> ids(ids_info.nbytes / 4);
    std::memcpy(ids.data(), ids_info.data, ids_info.nbytes);
    LogitsCase c{dir, f32_tensor(reference, "logits_bf16"), f32_tensor(reference, "logits_f32"), {}, int64_t(ids.size()),
                 weights->config().vocab_size};
    s3::engine::RunnerOptions options;
    options.max_batch_tokens = 512;
    options.device = device;
    c.ours.resize(size_t(c.T * c.V));
    s3::engine::make_model_runner(options, weights, pool)->logits(ids.data(), c.T, 0, c.ours.data());
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(cpu_logits_match_transformers_qwen3) {
  // The checkpoints are BF16: the CPU multiplies them in f32 or, at the BF16-product levels, in BF16.
  const bool bf16_products = s3::cpu::matmul_kernels().rounds_input_to_bf16;
  for (const LogitsCase& c : logits_cases(s3::model::Device::Cpu)) {
    std::printf("  %s: cpu argmax %.3f against transformers f32 (SIMD level %s)\n", c.dir.c_str(),
                argmax_agreement(c.ours, c.hf_f32, c.T, c.V), s3::simd_level_name(s3::cpu_info().level));
    CHECK_NMSE(c.dir + " cpu vs transformers f32", c.ours.data(), c.hf_f32.data(), c.ours.size(), bf16_products ? 1e-3 : 1e-9);
  }
}

TEST(cuda_logits_match_transformers_qwen3) {
  reference_dirs("reference.safetensors");
  s3test::require_cuda();
  for (const LogitsCase& c : logits_cases(s3::model::Device::Cuda)) {
    const double hf_own = s3test::nmse(c.hf_bf16.data(), c.hf_f32.data(), c.hf_f32.size());
    std::printf("  %s: transformers bf16 vs its f32: nmse %.3g, argmax %.3f\n", c.dir.c_str(), hf_own,
                argmax_agreement(c.hf_bf16, c.hf_f32, c.T, c.V));
    std::printf("  %s: cuda argmax %.3f against transformers f32\n", c.dir.c_str(), argmax_agreement(c.ours, c.hf_f32, c.T, c.V));
    CHECK_NMSE(c.dir + " cuda vs transformers f32", c.ours.data(), c.hf_f32.data(), c.ours.size(), std::max(1e-3, hf_own));
    CHECK_NMSE(c.dir + " cuda vs transformers bf16", c.ours.data(), c.hf_bf16.data(), c.ours.size(), std::max(1e-2, 4 * hf_own));
  }
}
