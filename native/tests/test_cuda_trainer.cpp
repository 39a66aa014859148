// test_cuda_trainer.cpp: the trainer on a CUDA device (train/cuda_trainer_compute.h behind
// train::Trainer) against the same trainer on the CPU, on the `small` shape with a micro-batch of
// packed policy-gradient sequences that share a prompt prefix, carry K = 4 score-centering draws and
// a KL penalty: every diagnostic, every parameter's gradient and the parameters after two AdamW
// updates. F32 products: gradients NMSE ≤ 1e-8, loss and gradient norm to 1e-6 relative; BF16
// products (both trainers round the same operands to BF16): gradients ≤ 1e-5; parameters after the
// updates ≤ 1e-6 either way (the reason is at the check).
// Then on the device: the same run twice gives the same bits, and a checkpoint resumes bit for bit
// (f32 and bf16 moments) and loads into the CPU trainer with the device's parameters; the CUDA runner
// takes the trainer's parameters on the device (stored and bf16 weights) with the bits of the host
// path's copies (logits compared bit for bit). Skipped where CUDA is not usable; where it is not,
// asking for it is refused with the reason (that test runs everywhere else).
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "engine/model_runner.h"
#include "model/device.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"
#include "train/trainer.h"

namespace {

using s3::train::LossKind;
using s3::train::TrainBatch;
using s3::train::Trainer;
using s3::train::TrainerOptions;

struct SmallModel {
  s3test::TestModel model;
  s3::model::Qwen3Weights weights;
  SmallModel()
      : model(s3test::make_test_model(s3test::small_qwen3_config(), s3::DType::F32, 31, s3::DType::F32)),
        weights(s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow)) {}
  Trainer trainer(const TrainerOptions& o) const { return Trainer(weights, s3test::qwen3_config_json(model.config), o); }
};

TrainerOptions options_on(s3::model::Device device, s3::MatmulPrecision precision, s3::train::OptimizerStateDtype state) {
  TrainerOptions o;
  o.device = device;
  o.matmul_precision = precision;
  o.adamw.state_dtype = state;
  o.adamw.lr = 1e-3;
  o.adamw.rounding_seed = 7;
  o.threads = 2;
  return o;
}

// Three sequences sharing a 40-token prompt (so the shared-prefix path runs) and a fourth alone.
TrainBatch policy_gradient_batch(int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<int64_t> lengths = {90, 70, 120, 60};
  std::vector<int32_t> prompt(40);
  for (int32_t& t : prompt) t = int32_t(rng() % uint64_t(vocab));
  TrainBatch b;
  b.kind = LossKind::PolicyGradient;
  b.num_draws = 4;
  b.kl_coef = 0.05f;
  b.temperature = 0.7;
  for (size_t s = 0; s < lengths.size(); s++) {
    const float advantage = s % 2 == 0 ? 0.8f : -0.5f;
    for (int64_t t = 0; t < lengths[s]; t++) {
      const bool in_prompt = s < 3 && t < int64_t(prompt.size());
      b.tokens.push_back(in_prompt ? prompt[size_t(t)] : int32_t(rng() % uint64_t(vocab)));
      const bool weighted = !in_prompt && t + 1 < lengths[s];
      b.coef.push_back(weighted ? advantage / float(lengths[s]) : 0.0f);
      b.old_logprobs.push_back(weighted ? -6.0f + 0.3f * normal(rng) : 0.0f);
      b.ref_logprobs.push_back(weighted ? -6.0f + 0.3f * normal(rng) : 0.0f);
      b.kl_weight.push_back(weighted ? 1.0f / float(lengths[s]) : 0.0f);
      for (int k = 0; k < 4; k++) {
        b.draw_tokens.push_back(weighted ? int32_t(rng() % uint64_t(vocab)) : -1);
        b.draw_logprobs.push_back(weighted ? -6.0f + 0.3f * normal(rng) : 0.0f);
      }
    }
    b.seq_lengths.push_back(lengths[s]);
  }
  return b;
}

double relative(double got, double want) { return std::fabs(got - want) / std::max(1e-30, std::fabs(want)); }

}  // namespace

TEST(trainer_on_cuda_where_cuda_cannot_run_is_refused_with_the_reason) {
  if (s3::model::device_availability().cuda_usable) SKIP("CUDA is usable here");
  const SmallModel m;
  try {
    m.trainer(options_on(s3::model::Device::Cuda, s3::MatmulPrecision::F32, s3::train::OptimizerStateDtype::F32));
    CHECK(false);
  } catch (const s3::train::TrainerError& e) {
    CHECK(std::string(e.what()).rfind("device cuda: ", 0) == 0);
  }
}

TEST(cuda_trainer_matches_the_cpu_trainer) {
  s3test::require_cuda();
  const SmallModel m;
  const TrainBatch batch = policy_gradient_batch(m.model.config.vocab_size, 3);
  for (const s3::MatmulPrecision precision : {s3::MatmulPrecision::F32, s3::MatmulPrecision::Bf16}) {
    const bool bf16 = precision == s3::MatmulPrecision::Bf16;
    const std::string name = bf16 ? " (bf16)" : " (f32)";
    Trainer cpu = m.trainer(options_on(s3::model::Device::Cpu, precision, s3::train::OptimizerStateDtype::F32));
    Trainer gpu = m.trainer(options_on(s3::model::Device::Cuda, precision, s3::train::OptimizerStateDtype::F32));
    std::printf("  [device] %s\n", gpu.device_description().c_str());
    const double grad_threshold = bf16 ? 1e-5 : 1e-8;
    for (int update = 0; update < 2; update++) {
      const s3::train::StepDiagnostics want = cpu.accumulate(batch);
      const s3::train::StepDiagnostics got = gpu.accumulate(batch);
      CHECK_EQ(got.tokens, want.tokens);
      CHECK(got.shared_prefix_tokens > 0);
      CHECK_EQ(got.shared_prefix_tokens, want.shared_prefix_tokens);
      CHECK(relative(got.loss, want.loss) <= (bf16 ? 1e-4 : 1e-6));
      CHECK(relative(got.mean_ratio, want.mean_ratio) <= 1e-5);
      CHECK(relative(got.mean_entropy, want.mean_entropy) <= 1e-5);
      CHECK(relative(got.kl_mean, want.kl_mean) <= 1e-4);
      CHECK(relative(got.centering, want.centering) <= 1e-4);
      CHECK_EQ(got.fraction_masked, want.fraction_masked);
      for (const auto& e : cpu.layout().entries) {
        CHECK_NMSE("grad " + e.name + name, gpu.grads().data() + e.offset, cpu.grads().data() + e.offset, e.count,
                   grad_threshold);
      }
      const s3::train::AdamWStepResult cpu_step = cpu.step();
      const s3::train::AdamWStepResult gpu_step = gpu.step();
      CHECK(relative(gpu_step.grad_norm, cpu_step.grad_norm) <= (bf16 ? 1e-3 : 1e-6));
      CHECK_EQ(gpu_step.step, cpu_step.step);
    }
    // Adam moves every parameter by about lr per step whatever its gradient's size, so a gradient near 0
    // whose sign the two sums disagree on moves its parameter the other way: per element up to 2·lr of
    // parameters ~0.02. A wrong update reads NMSE ~1e-2; 1e-6 leaves room for such sign flips only.
    CHECK_NMSE("params after two updates" + name, gpu.params().data(), cpu.params().data(), cpu.params().size(), 1e-6);
    // Gradients are zero after an update, on the device as on the host.
    for (float g : gpu.grads()) CHECK_EQ(g, 0.0f);
  }
}

TEST(cuda_trainer_repeats_itself_and_resumes_bit_identically) {
  s3test::require_cuda();
  const SmallModel m;
  const TrainBatch b1 = policy_gradient_batch(m.model.config.vocab_size, 11);
  const TrainBatch b2 = policy_gradient_batch(m.model.config.vocab_size, 12);
  for (const auto state : {s3::train::OptimizerStateDtype::F32, s3::train::OptimizerStateDtype::Bf16}) {
    const TrainerOptions o = options_on(s3::model::Device::Cuda, s3::MatmulPrecision::Bf16, state);
    auto run = [&](Trainer& t, int updates) {
      for (int i = 0; i < updates; i++) {
        t.accumulate(i % 2 ? b2 : b1);
        t.step();
      }
    };
    Trainer a = m.trainer(o), again = m.trainer(o);
    run(a, 2);
    run(again, 2);
    CHECK(std::memcmp(a.params().data(), again.params().data(), a.params().size() * sizeof(float)) == 0);
    s3test::TempDir dir;
    const std::string ckpt = dir.path() + "/ckpt";
    a.save(ckpt);
    Trainer resumed(ckpt, o);
    CHECK_EQ(resumed.step_count(), int64_t(2));
    run(a, 2);
    run(resumed, 2);
    CHECK(std::memcmp(a.params().data(), resumed.params().data(), a.params().size() * sizeof(float)) == 0);
    // The device's checkpoint is the CPU trainer's format: it opens there with the same parameters.
    TrainerOptions on_cpu = o;
    on_cpu.device = s3::model::Device::Cpu;
    const Trainer cpu(ckpt, on_cpu);
    CHECK_EQ(cpu.step_count(), int64_t(2));
    CHECK(std::memcmp(cpu.params().data(), again.params().data(), cpu.params().size() * sizeof(float)) == 0);
  }
}

TEST(cuda_runner_takes_the_trainers_parameters_on_the_device_with_the_host_paths_bits) {
  s3test::require_cuda();
  const SmallModel m;
  Trainer trainer = m.trainer(options_on(s3::model::Device::Cuda, s3::MatmulPrecision::Bf16, s3::train::OptimizerStateDtype::F32));
  CHECK(trainer.device_snapshot() != nullptr);
  CHECK(m.trainer(options_on(s3::model::Device::Cpu, s3::MatmulPrecision::F32, s3::train::OptimizerStateDtype::F32))
            .device_snapshot() == nullptr);
  trainer.accumulate(policy_gradient_batch(m.model.config.vocab_size, 21));
  trainer.step();  // weights that differ from the model the runners start with
  s3::ThreadPool pool(2);
  std::vector<int32_t> tokens(40);
  for (size_t i = 0; i < tokens.size(); i++) tokens[i] = int32_t((i * 37 + 5) % size_t(m.model.config.vocab_size));
  const int64_t T = int64_t(tokens.size()), V = m.model.config.vocab_size;
  const auto initial = std::make_shared<const s3::model::Qwen3Weights>(trainer.weights());
  const auto untrained = [&] {
    return std::make_shared<const s3::model::Qwen3Weights>(
        s3::model::Qwen3Weights::from_tensors(m.model.config, m.model.named(), s3::model::Qwen3Weights::Storage::Copy));
  };
  for (const auto format : {s3::engine::WeightFormat::Stored, s3::engine::WeightFormat::Bf16, s3::engine::WeightFormat::Fp8}) {
    s3::engine::RunnerOptions options;
    options.device = s3::model::Device::Cuda;
    options.weight_format = format;
    options.max_batch_tokens = 256;
    const auto from_host = s3::engine::make_model_runner(options, untrained(), pool);
    const auto from_device = s3::engine::make_model_runner(options, untrained(), pool);
    if (format == s3::engine::WeightFormat::Fp8) {
      CHECK(!from_device->takes_device_params());  // FP8 is quantized on the host
      continue;
    }
    CHECK(from_device->takes_device_params());
    from_host->set_weights(initial);
    from_device->set_weights_from_device(trainer.device_snapshot());
    std::vector<float> a(size_t(T * V)), b(a.size());
    from_host->logits(tokens.data(), T, 0, a.data());
    from_device->logits(tokens.data(), T, 0, b.data());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    // Again into the same memory (update in place), after another step.
    trainer.accumulate(policy_gradient_batch(m.model.config.vocab_size, 22));
    trainer.step();
    from_host->set_weights(std::make_shared<const s3::model::Qwen3Weights>(trainer.weights()));
    from_device->set_weights_from_device(trainer.device_snapshot());
    from_host->logits(tokens.data(), T, 0, a.data());
    from_device->logits(tokens.data(), T, 0, b.data());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
  const s3::engine::RunnerOptions on_cpu;
  CHECK(!s3::engine::make_model_runner(on_cpu, untrained(), pool)->takes_device_params());
}
