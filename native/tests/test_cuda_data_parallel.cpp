// test_cuda_data_parallel.cpp: CUDA trainers summing their gradients (train::Trainer::
// all_reduce_gradients, and accumulate_and_sum, whose buckets start while the backward runs). Two
// CUDA trainers on device 0 over the host ring (the path without NCCL: gradients down, summed, up)
// hold one trainer's gradient over both micro-batches, the same bits on both ranks, and step alike;
// summing during the backward gives the same bits as summing after it; one rank's NCCL collective
// (cuda/nccl_collective.h, on the device) leaves a CUDA trainer's gradients exactly as they were (a
// sum over one rank), after the backward and during it. Skipped where CUDA (or, for NCCL, NCCL) is
// not usable.
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/host_ring.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"
#include "train/trainer.h"
#ifdef S3_WITH_CUDA
#include "cuda/nccl.h"
#include "cuda/nccl_collective.h"
#endif

#ifdef S3_WITH_CUDA

namespace {

using s3::train::TrainBatch;
using s3::train::Trainer;
using s3::train::TrainerOptions;

struct TinyModel {
  s3test::TestModel model;
  s3::model::Qwen3Weights weights;
  TinyModel()
      : model(s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::F32, 43, s3::DType::F32)),
        weights(s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow)) {}
  std::unique_ptr<Trainer> trainer() const {
    TrainerOptions o;
    o.device = s3::model::Device::Cuda;
    o.adamw.lr = 1e-3;
    return std::make_unique<Trainer>(weights, s3test::qwen3_config_json(model.config), o);
  }
};

TrainBatch sft_batch(int i, int64_t vocab) {
  std::mt19937_64 rng(uint64_t(500 + i));
  TrainBatch b;
  for (int64_t t = 0; t < 40 + 7 * i; t++) {
    b.tokens.push_back(int32_t(rng() % uint64_t(vocab)));
    b.coef.push_back(float(1 + rng() % 5) / 10.0f);
  }
  b.coef.back() = 0.0f;
  return b;
}

}  // namespace

TEST(cuda_trainers_over_the_host_ring_sum_to_the_one_trainer_gradient) {
  s3test::require_cuda();
  const TinyModel m;
  const int64_t vocab = m.model.config.vocab_size;
  auto single = m.trainer();
  single->accumulate(sft_batch(0, vocab));
  single->accumulate(sft_batch(1, vocab));
  const std::vector<float> want = single->grads();
  std::vector<std::unique_ptr<s3::HostRing>> ring;
  std::vector<std::unique_ptr<Trainer>> ranks;
  for (int r = 0; r < 2; r++) {
    ring.push_back(std::make_unique<s3::HostRing>(r, 2, std::chrono::seconds(60), "127.0.0.1"));
    ranks.push_back(m.trainer());
  }
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&, r] {
      try {
        ring[size_t(r)]->connect("127.0.0.1", ring[size_t(1 - r)]->port());
        ranks[size_t(r)]->accumulate(sft_batch(r, vocab));
        ranks[size_t(r)]->all_reduce_gradients(*ring[size_t(r)]);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(errors[0], std::string());
  CHECK_EQ(errors[1], std::string());
  CHECK(std::memcmp(ranks[0]->grads().data(), ranks[1]->grads().data(), want.size() * sizeof(float)) == 0);
  CHECK_NMSE("summed gradients", ranks[0]->grads().data(), want.data(), want.size(), 1e-10);
  const double n0 = ranks[0]->step().grad_norm, n1 = ranks[1]->step().grad_norm;
  CHECK_EQ(n0, n1);
  CHECK_EQ(ranks[0]->parameter_fingerprint(), ranks[1]->parameter_fingerprint());
}

TEST(cuda_trainers_summing_during_the_backward_match_summing_after_it) {
  s3test::require_cuda();
  const TinyModel m;
  const int64_t vocab = m.model.config.vocab_size;
  std::vector<std::vector<float>> after(2), during(2);
  for (const bool overlapped : {false, true}) {
    std::vector<std::unique_ptr<s3::HostRing>> ring;
    std::vector<std::unique_ptr<Trainer>> ranks;
    for (int r = 0; r < 2; r++) {
      ring.push_back(std::make_unique<s3::HostRing>(r, 2, std::chrono::seconds(60), "127.0.0.1"));
      ranks.push_back(m.trainer());
    }
    std::vector<std::string> errors(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; r++) {
      threads.emplace_back([&, r] {
        try {
          ring[size_t(r)]->connect("127.0.0.1", ring[size_t(1 - r)]->port());
          ranks[size_t(r)]->accumulate(sft_batch(3, vocab));  // an earlier micro-batch, not summed alone
          if (overlapped) {
            ranks[size_t(r)]->accumulate_and_sum(sft_batch(4 + r, vocab), *ring[size_t(r)]);
          } else {
            ranks[size_t(r)]->accumulate(sft_batch(4 + r, vocab));
            ranks[size_t(r)]->all_reduce_gradients(*ring[size_t(r)]);
          }
        } catch (const std::exception& e) {
          errors[size_t(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK_EQ(errors[0], std::string());
    CHECK_EQ(errors[1], std::string());
    for (int r = 0; r < 2; r++) (overlapped ? during : after)[size_t(r)] = ranks[size_t(r)]->grads();
  }
  CHECK_EQ(s3test::exact_mismatches(during[0], after[0]), size_t(0));
  CHECK_EQ(s3test::exact_mismatches(during[1], after[1]), size_t(0));
  CHECK_EQ(s3test::exact_mismatches(during[0], during[1]), size_t(0));
}

TEST(nccl_collective_of_one_rank_keeps_a_cuda_trainers_gradients) {
  s3test::require_cuda();
  const s3::cuda::NcclLoad& load = s3::cuda::process_nccl();
  if (load.library == nullptr) SKIP("NCCL is not usable here: " + load.error);
  const TinyModel m;
  auto trainer = m.trainer();
  trainer->accumulate(sft_batch(2, m.model.config.vocab_size));
  const std::vector<float> before = trainer->grads();
  s3test::cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  s3::cuda::NcclCollective group(load.library, s3::cuda::nccl_unique_id(*load.library), 1, 0, std::chrono::seconds(60));
  std::printf("  [nccl] %s\n", group.description().c_str());
  trainer->all_reduce_gradients(group);
  CHECK_EQ(s3test::exact_mismatches(trainer->grads(), before), size_t(0));
  std::vector<float> host = before;
  group.all_reduce_sum(host.data(), host.size());  // the host path through a device copy
  CHECK_EQ(s3test::exact_mismatches(host, before), size_t(0));
  // Summed during the backward: the same as accumulating alone.
  auto alone = m.trainer(), summed = m.trainer();
  alone->accumulate(sft_batch(5, m.model.config.vocab_size));
  summed->accumulate_and_sum(sft_batch(5, m.model.config.vocab_size), group);
  CHECK_EQ(s3test::exact_mismatches(summed->grads(), alone->grads()), size_t(0));
}

#else

TEST(cuda_data_parallel) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
