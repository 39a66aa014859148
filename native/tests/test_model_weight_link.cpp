// model/weight_link.h over a two-rank host ring on loopback (ranks as threads): the receiver builds
// weights holding the sender's exact bits, in one bucket and across bucket boundaries; a receiver
// whose model has another shape refuses before the payload, both sides say why, and the link then
// carries a matching model; a payload that does not make a model is refused after it, on both sides;
// a sender that stops becomes a CollectiveError on the receiver within the timeout.
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "core/host_ring.h"
#include "model/weight_link.h"
#include "model/qwen3_param_layout.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

namespace {

using s3::CollectiveError;
using s3::HostRing;
using s3::model::Qwen3Config;
using s3::model::Qwen3ParamLayout;
using s3::model::WeightLinkRefused;
using s3::model::WeightsSnapshot;

struct Link {
  std::unique_ptr<HostRing> sender, receiver;
};

Link connected_link(std::chrono::milliseconds timeout) {
  Link link{std::make_unique<HostRing>(0, 2, timeout, "127.0.0.1"), std::make_unique<HostRing>(1, 2, timeout, "127.0.0.1")};
  std::thread other([&] { link.receiver->connect("127.0.0.1", link.sender->port()); });
  link.sender->connect("127.0.0.1", link.receiver->port());
  other.join();
  return link;
}

std::vector<float> random_params(const Qwen3Config& config, uint64_t seed) {
  std::vector<float> params(Qwen3ParamLayout::make(config).total);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (float& x : params) x = normal(rng);
  return params;
}

WeightsSnapshot snapshot_of(const Qwen3Config& config, const std::vector<float>& params) {
  return s3::model::snapshot_of_params(s3test::qwen3_config_json(config), params.data());
}

struct Outcome {
  std::string sender_error, receiver_error;
  std::vector<float> received;  // the received weights' parameters, in layout order
};

Outcome transfer(Link& link, const WeightsSnapshot& snapshot, const Qwen3Config& receiver_config, size_t bucket_bytes) {
  Outcome out;
  std::thread receiver([&] {
    try {
      const s3::model::ReceivedWeights got = s3::model::receive_weights(*link.receiver, receiver_config, bucket_bytes);
      CHECK_EQ(got.transfer.bytes, snapshot.payload->size());
      out.received = s3::model::qwen3_params_from_weights(*got.weights, Qwen3ParamLayout::make(got.weights->config()));
    } catch (const std::exception& e) {
      out.receiver_error = e.what();
    }
  });
  try {
    const auto sent = s3::model::send_weights(*link.sender, snapshot, bucket_bytes);
    CHECK_EQ(sent.bytes, snapshot.payload->size());
  } catch (const std::exception& e) {
    out.sender_error = e.what();
  }
  receiver.join();
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(weight_link_delivers_the_senders_exact_bits_in_one_bucket_and_across_buckets) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const std::vector<float> params = random_params(config, 7), next = random_params(config, 8);
  const WeightsSnapshot snapshot = snapshot_of(config, params);
  const size_t bytes = params.size() * sizeof(float), payload = snapshot.payload->size();
  for (const size_t bucket : {s3::model::kWeightBucketBytes, payload / 3 + 4, size_t(4096), payload - 1}) {
    Link link = connected_link(std::chrono::seconds(20));
    const Outcome out = transfer(link, snapshot, config, bucket);
    CHECK_EQ(out.sender_error, std::string());
    CHECK_EQ(out.receiver_error, std::string());
    CHECK_EQ(out.received.size(), params.size());
    CHECK(std::memcmp(out.received.data(), params.data(), bytes) == 0);
    // The same link carries the next version.
    const Outcome again = transfer(link, snapshot_of(config, next), config, bucket);
    CHECK_EQ(again.receiver_error, std::string());
    CHECK(std::memcmp(again.received.data(), next.data(), bytes) == 0);
  }
}

TEST(weight_link_refuses_another_shape_before_the_payload_and_stays_usable) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  Qwen3Config wider = config;
  wider.intermediate_size += 8;
  const std::vector<float> params = random_params(config, 9);
  const WeightsSnapshot snapshot = snapshot_of(config, params);
  Link link = connected_link(std::chrono::seconds(20));
  const Outcome refused = transfer(link, snapshot, wider, s3::model::kWeightBucketBytes);
  CHECK(contains(refused.sender_error, "the receiver refused the weights before they were sent"));
  CHECK(contains(refused.receiver_error, "the sender's model is " + s3::model::qwen3_shape_text(config)));
  CHECK(contains(refused.receiver_error, "this engine's is " + s3::model::qwen3_shape_text(wider)));
  const Outcome accepted = transfer(link, snapshot, config, s3::model::kWeightBucketBytes);
  CHECK_EQ(accepted.sender_error, std::string());
  CHECK_EQ(accepted.receiver_error, std::string());
  CHECK(std::memcmp(accepted.received.data(), params.data(), params.size() * sizeof(float)) == 0);
}

TEST(weight_link_refuses_tensors_that_make_no_model_on_both_sides_and_stays_usable) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const std::vector<float> params = random_params(config, 10);
  WeightsSnapshot broken = snapshot_of(config, params);
  broken.tensors.back().name = "model.layers.0.mlp.not_a_projection.weight";
  Link link = connected_link(std::chrono::seconds(20));
  const Outcome refused = transfer(link, broken, config, s3::model::kWeightBucketBytes);
  CHECK(contains(refused.sender_error, "the receiver could not make a model of the weights sent"));
  CHECK(!refused.receiver_error.empty());
  const Outcome accepted = transfer(link, snapshot_of(config, params), config, s3::model::kWeightBucketBytes);
  CHECK_EQ(accepted.receiver_error, std::string());
  CHECK(std::memcmp(accepted.received.data(), params.data(), params.size() * sizeof(float)) == 0);
}

TEST(weight_link_receiver_fails_within_the_timeout_when_the_sender_stops) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  Link link = connected_link(std::chrono::milliseconds(1500));
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  std::thread receiver([&] {
    try {
      s3::model::receive_weights(*link.receiver, config);
    } catch (const CollectiveError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  link.sender->close();
  receiver.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(!error.empty());
  CHECK(seconds < 5.0);
}
