// test_cuda_transformers.cpp: our logits against an implementation nobody here wrote. The GPU check
// (scripts/gpu-check.sh) saves randomly initialised transformers Qwen3ForCausalLM models with
// save_pretrained (bf16) and, beside each, reference.safetensors: the token ids and the logits
// transformers computes for them on the same GPU in bf16 and in f32. Here each folder named in
// S3_HF_CHECK_DIRS (colon-separated) is loaded by our loader and run by the CPU runner (f32 from the
// bf16 weights: NMSE ≤ 1e-5 against transformers' f32) and the CUDA runner (bf16 GEMM inputs: no
// further from transformers' f32 than transformers' own bf16 run is, or NMSE ≤ 1e-3), with the
// argmax agreement printed. Skipped when the variable is unset or CUDA is not usable.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "core/thread_pool.h"
#include "engine/model_runner.h"
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

}  // namespace

TEST(cuda_logits_match_transformers_qwen3) {
  const char* dirs = std::getenv("S3_HF_CHECK_DIRS");
  if (dirs == nullptr || dirs[0] == '\0') SKIP("S3_HF_CHECK_DIRS is not set (scripts/gpu-check.sh sets it)");
  s3test::require_cuda();
  std::stringstream list(dirs);
  std::string dir;
  s3::ThreadPool pool(8);
  while (std::getline(list, dir, ':')) {
    if (dir.empty()) continue;
    const auto weights = std::make_shared<const s3::model::Qwen3Weights>(s3::model::Qwen3Weights::load(dir));
    const s3::SafetensorsFile reference = s3::SafetensorsFile::open(dir + "/reference.safetensors");
    const s3::TensorInfo& ids_info = reference.info("ids");
    std::vector<int32_t> ids(ids_info.nbytes / 4);
    std::memcpy(ids.data(), ids_info.data, ids_info.nbytes);
    const std::vector<float> hf_bf16 = f32_tensor(reference, "logits_bf16"), hf_f32 = f32_tensor(reference, "logits_f32");
    const int64_t T = int64_t(ids.size()), V = weights->config().vocab_size;
    s3::engine::RunnerOptions options;
    options.max_batch_tokens = 512;
    options.device = s3::model::Device::Cpu;
    std::vector<float> cpu(size_t(T * V)), gpu(cpu.size());
    s3::engine::make_model_runner(options, weights, pool)->logits(ids.data(), T, 0, cpu.data());
    options.device = s3::model::Device::Cuda;
    s3::engine::make_model_runner(options, weights, pool)->logits(ids.data(), T, 0, gpu.data());
    const double hf_own = s3test::nmse(hf_bf16.data(), hf_f32.data(), hf_f32.size());
    std::printf("  %s: transformers bf16 vs its f32: nmse %.3g, argmax %.3f\n", dir.c_str(), hf_own, argmax_agreement(hf_bf16, hf_f32, T, V));
    std::printf("  %s: cpu argmax %.3f, cuda argmax %.3f (against transformers f32)\n", dir.c_str(), argmax_agreement(cpu, hf_f32, T, V),
                argmax_agreement(gpu, hf_f32, T, V));
    CHECK_NMSE(dir + " cpu vs transformers f32", cpu.data(), hf_f32.data(), cpu.size(), 1e-5);
    CHECK_NMSE(dir + " cuda vs transformers f32", gpu.data(), hf_f32.data(), gpu.size(), std::max(1e-3, hf_own));
    CHECK_NMSE(dir + " cuda vs transformers bf16", gpu.data(), hf_bf16.data(), gpu.size(), std::max(1e-2, 4 * hf_own));
  }
}
