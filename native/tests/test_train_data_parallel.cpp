// Data-parallel training arithmetic (train::Trainer::all_reduce_gradients over core/host_ring.h,
// ranks as threads): R ranks that each accumulate their share of a batch's micro-batches and sum
// their gradients hold the gradient one trainer accumulates over the whole batch (up to the order
// of the sums), the same bits on every rank; the AdamW step that follows leaves every rank with
// the same parameters (the same fingerprint), within rounding of the one-trainer step; a rank
// that stops turns the others' all-reduce into a TrainerError naming it.
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/host_ring.h"
#include "model/qwen3_weights.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"
#include "train/gradient_buckets.h"
#include "train/trainer.h"

namespace {

using s3::HostRing;
using s3::train::TrainBatch;
using s3::train::Trainer;
using s3::train::TrainerOptions;

struct Fixture {
  s3test::TestModel model;
  s3::model::Qwen3Weights weights;
  Fixture()
      : model(s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::F32, 41, s3::DType::F32)),
        weights(s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow)) {}
  std::unique_ptr<Trainer> trainer() const {
    TrainerOptions o;
    o.adamw.lr = 1e-3;
    o.threads = 1;
    return std::make_unique<Trainer>(weights, s3test::qwen3_config_json(model.config), o);
  }
};

// Micro-batch i: two SFT sequences of random tokens with varied coefficients.
TrainBatch micro_batch(int i, int64_t vocab) {
  std::mt19937_64 rng(uint64_t(1000 + i));
  TrainBatch b;
  for (const int64_t length : {int64_t(9 + i), int64_t(6)}) {
    for (int64_t t = 0; t < length; t++) {
      b.tokens.push_back(int32_t(rng() % uint64_t(vocab)));
      b.coef.push_back(t + 1 == length ? 0.0f : float(1 + rng() % 5) / 10.0f);
    }
    b.seq_lengths.push_back(length);
  }
  return b;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(data_parallel_ranks_sum_to_the_one_trainer_gradient_and_step_alike) {
  const Fixture f;
  const int64_t vocab = f.model.config.vocab_size;
  constexpr int kMicroBatches = 5;
  auto single = f.trainer();
  for (int i = 0; i < kMicroBatches; i++) single->accumulate(micro_batch(i, vocab));
  const std::vector<float> union_grads = single->grads();
  single->step();

  for (const int R : {2, 3}) {
    std::vector<std::unique_ptr<HostRing>> ring;
    std::vector<std::unique_ptr<Trainer>> ranks;
    for (int r = 0; r < R; r++) {
      ring.push_back(std::make_unique<HostRing>(r, R, std::chrono::seconds(20), "127.0.0.1"));
      ranks.push_back(f.trainer());
    }
    std::vector<std::string> errors(static_cast<size_t>(R));
    std::vector<std::thread> threads;
    for (int r = 0; r < R; r++) {
      threads.emplace_back([&, r] {
        try {
          ring[size_t(r)]->connect("127.0.0.1", ring[size_t((r + 1) % R)]->port());
          // Round robin; with 2 ranks the last micro-batch sums as it goes (overlapped with its backward),
          // with 3 the sum follows the backward: the same buckets either way.
          for (int i = r; i < kMicroBatches; i += R) {
            if (R == 2 && i + R >= kMicroBatches) {
              ranks[size_t(r)]->accumulate_and_sum(micro_batch(i, vocab), *ring[size_t(r)]);
            } else {
              ranks[size_t(r)]->accumulate(micro_batch(i, vocab));
            }
          }
          if (R != 2) ranks[size_t(r)]->all_reduce_gradients(*ring[size_t(r)]);
        } catch (const std::exception& e) {
          errors[size_t(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& e : errors) CHECK_EQ(e, std::string());
    double gmax = 0.0, diff = 0.0;
    for (size_t i = 0; i < union_grads.size(); i++) {
      gmax = std::max(gmax, double(std::fabs(union_grads[i])));
      diff = std::max(diff, double(std::fabs(ranks[0]->grads()[i] - union_grads[i])));
    }
    CHECK(gmax > 0.0);
    CHECK(diff <= 1e-5 * gmax);
    for (int r = 1; r < R; r++) {
      CHECK(std::memcmp(ranks[0]->grads().data(), ranks[size_t(r)]->grads().data(), union_grads.size() * sizeof(float)) == 0);
    }
    std::vector<double> norms;
    for (auto& t : ranks) norms.push_back(t->step().grad_norm);
    for (int r = 1; r < R; r++) {
      CHECK_EQ(norms[size_t(r)], norms[0]);
      CHECK_EQ(ranks[size_t(r)]->parameter_fingerprint(), ranks[0]->parameter_fingerprint());
    }
    double pdiff = 0.0;
    for (size_t i = 0; i < single->params().size(); i++) {
      pdiff = std::max(pdiff, double(std::fabs(ranks[0]->params()[i] - single->params()[i])));
    }
    CHECK(pdiff <= 1e-5);  // lr 1e-3: a sign-sized first step, equal up to the gradients' rounding
    CHECK(ranks[0]->parameter_fingerprint() != f.trainer()->parameter_fingerprint());  // it did move
  }
}

TEST(data_parallel_buckets_cover_every_parameter_once_layers_last_to_first) {
  for (const bool tied : {true, false}) {
    auto c = s3test::tiny_qwen3_config();
    c.tie_word_embeddings = tied;
    const auto layout = s3::model::Qwen3ParamLayout::make(c);
    const auto buckets = s3::train::gradient_buckets(layout);
    CHECK_EQ(buckets.size(), layout.layers.size() + 1);
    std::vector<int> covered(layout.total, 0);
    for (size_t b = 0; b < buckets.size(); b++) {
      CHECK_EQ(buckets[b].layer, b < layout.layers.size() ? int64_t(layout.layers.size() - 1 - b) : int64_t(-1));
      for (const auto& range : buckets[b].ranges)
        for (size_t i = range.offset; i < range.offset + range.count; i++) covered[i] += 1;
    }
    for (const int n : covered) CHECK_EQ(n, 1);
  }
}

TEST(data_parallel_ranks_with_and_without_micro_batches_pair_their_sums) {
  // Rank 0 takes both micro-batches and sums as it goes; rank 1 has none and only sums.
  const Fixture f;
  const int64_t vocab = f.model.config.vocab_size;
  auto single = f.trainer();
  single->accumulate(micro_batch(0, vocab));
  single->accumulate(micro_batch(1, vocab));
  std::vector<std::unique_ptr<HostRing>> ring;
  for (int r = 0; r < 2; r++) ring.push_back(std::make_unique<HostRing>(r, 2, std::chrono::seconds(20), "127.0.0.1"));
  auto busy = f.trainer();
  auto idle = f.trainer();
  std::string error;
  std::thread peer([&] {
    try {
      ring[1]->connect("127.0.0.1", ring[0]->port());
      idle->all_reduce_gradients(*ring[1]);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  ring[0]->connect("127.0.0.1", ring[1]->port());
  busy->accumulate(micro_batch(0, vocab));
  busy->accumulate_and_sum(micro_batch(1, vocab), *ring[0]);
  peer.join();
  CHECK_EQ(error, std::string());
  CHECK(std::memcmp(busy->grads().data(), single->grads().data(), single->grads().size() * sizeof(float)) == 0);  // x + 0 = x
  CHECK(std::memcmp(idle->grads().data(), single->grads().data(), single->grads().size() * sizeof(float)) == 0);
}

TEST(data_parallel_rank_that_stops_fails_the_all_reduce_with_its_name) {
  const Fixture f;
  std::vector<std::unique_ptr<HostRing>> ring;
  for (int r = 0; r < 2; r++) ring.push_back(std::make_unique<HostRing>(r, 2, std::chrono::seconds(20), "127.0.0.1"));
  auto trainer = f.trainer();
  std::thread peer([&] {
    ring[1]->connect("127.0.0.1", ring[0]->port());
    ring[1]->close();  // rank 1 dies after the rendezvous
  });
  ring[0]->connect("127.0.0.1", ring[1]->port());
  peer.join();
  trainer->accumulate(micro_batch(0, f.model.config.vocab_size));
  std::string message;
  try {
    trainer->all_reduce_gradients(*ring[0]);
  } catch (const s3::train::TrainerError& e) {
    message = e.what();
  }
  CHECK(contains(message, "all_reduce_gradients"));
  CHECK(contains(message, "rank 1"));
}
