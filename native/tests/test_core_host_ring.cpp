// core/host_ring.h, ranks as threads on loopback: all_reduce_sum gives every rank the same bits,
// within rounding of the exact (double) sum, the same bits run to run, across piece boundaries
// and for counts that do not split evenly; broadcast from any root; one rank (no sockets); a rank
// that stops or falls silent becomes a CollectiveError on its peers naming the rank, within the
// timeout; a ring that failed refuses later calls; a wrong peer is refused at connect.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
#include "tests/test_framework.h"

namespace {

using s3::CollectiveError;
using s3::HostRing;

std::vector<std::unique_ptr<HostRing>> make_ring(int ranks, std::chrono::milliseconds timeout) {
  std::vector<std::unique_ptr<HostRing>> ring;
  for (int r = 0; r < ranks; r++) ring.push_back(std::make_unique<HostRing>(r, ranks, timeout, "127.0.0.1"));
  return ring;
}

// Runs body(rank) on one thread per rank; returns each rank's error message ("" when none).
std::vector<std::string> on_every_rank(int ranks, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; r++) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

void connect_all(std::vector<std::unique_ptr<HostRing>>& ring) {
  const int R = int(ring.size());
  const auto errors = on_every_rank(R, [&](int r) { ring[size_t(r)]->connect("127.0.0.1", ring[size_t((r + 1) % R)]->port()); });
  for (const auto& e : errors) CHECK_EQ(e, std::string());
}

std::vector<std::vector<float>> random_buffers(int ranks, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> data(static_cast<size_t>(ranks), std::vector<float>(count));
  for (auto& d : data)
    for (float& x : d) x = normal(rng);
  return data;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(host_ring_all_reduce_gives_every_rank_the_same_bits_of_the_sum) {
  for (const int R : {2, 3, 4}) {
    for (const size_t count : {size_t(1), size_t(7), size_t(1000), HostRing::kPieceFloats * size_t(R) + 12345}) {
      auto ring = make_ring(R, std::chrono::seconds(20));
      connect_all(ring);
      const auto inputs = random_buffers(R, count, 100 + count);
      auto data = inputs;
      const auto errors = on_every_rank(R, [&](int r) { ring[size_t(r)]->all_reduce_sum(data[size_t(r)].data(), count); });
      for (const auto& e : errors) CHECK_EQ(e, std::string());
      for (int r = 1; r < R; r++) CHECK(std::memcmp(data[0].data(), data[size_t(r)].data(), count * sizeof(float)) == 0);
      double worst = 0.0;
      for (size_t i = 0; i < count; i++) {
        double exact = 0.0;
        for (int r = 0; r < R; r++) exact += double(inputs[size_t(r)][i]);
        worst = s3test::max_or_nan(worst, std::fabs(double(data[0][i]) - exact));
      }
      CHECK(worst <= 1e-5 * R);
      // Run to run: the same inputs give the same bits (the order of the sums is fixed).
      auto again = inputs;
      on_every_rank(R, [&](int r) { ring[size_t(r)]->all_reduce_sum(again[size_t(r)].data(), count); });
      CHECK(std::memcmp(again[0].data(), data[0].data(), count * sizeof(float)) == 0);
    }
  }
}

TEST(host_ring_broadcast_copies_the_root_to_every_rank) {
  const int R = 3;
  auto ring = make_ring(R, std::chrono::seconds(20));
  connect_all(ring);
  for (const int root : {0, 2}) {
    const size_t bytes = HostRing::kPieceFloats * sizeof(float) * 2 + 3;
    std::vector<std::vector<uint8_t>> data(R, std::vector<uint8_t>(bytes));
    for (size_t i = 0; i < bytes; i++) data[size_t(root)][i] = uint8_t((i * 131 + size_t(root)) & 0xff);
    const auto errors = on_every_rank(R, [&](int r) { ring[size_t(r)]->broadcast(data[size_t(r)].data(), bytes, root); });
    for (const auto& e : errors) CHECK_EQ(e, std::string());
    for (int r = 0; r < R; r++) CHECK(data[size_t(r)] == data[size_t(root)]);
  }
  CHECK_THROWS(CollectiveError, ring[0]->broadcast(nullptr, 0, 3));
}

TEST(host_ring_of_one_rank_needs_no_peer) {
  HostRing one(0, 1, std::chrono::milliseconds(100));
  CHECK(one.connected());
  std::vector<float> x = {1.5f, -2.0f};
  one.all_reduce_sum(x.data(), x.size());
  CHECK_EQ(x[0], 1.5f);
  CHECK_THROWS(CollectiveError, HostRing(2, 2, std::chrono::milliseconds(100)));
}

TEST(host_ring_rank_that_stops_is_an_error_on_its_peers_not_a_hang) {
  const int R = 3;
  auto ring = make_ring(R, std::chrono::seconds(20));
  connect_all(ring);
  std::vector<std::vector<float>> data(R, std::vector<float>(100000, 1.0f));
  const auto started = std::chrono::steady_clock::now();
  const auto errors = on_every_rank(R, [&](int r) {
    if (r == 1) {
      ring[1]->close();  // rank 1 stops before the collective
      return;
    }
    ring[size_t(r)]->all_reduce_sum(data[size_t(r)].data(), data[size_t(r)].size());
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("  [host ring] a stopped rank, seen in %.2f s: %s\n", seconds, errors[2].c_str());
  CHECK(seconds < 10.0);  // at once (the sockets close), well before the 20 s timeout
  CHECK(contains(errors[2], "rank 1 closed its connection"));
  CHECK(contains(errors[2], "all_reduce_sum"));
  CHECK(!errors[0].empty());
  // A ring that failed refuses later calls.
  std::string later;
  try {
    ring[2]->all_reduce_sum(data[2].data(), 1);
  } catch (const CollectiveError& e) {
    later = e.what();
  }
  CHECK(contains(later, "failed earlier"));
}

TEST(host_ring_silent_rank_times_out_naming_it) {
  const int R = 2;
  auto ring = make_ring(R, std::chrono::milliseconds(400));
  connect_all(ring);
  std::vector<float> x(10, 1.0f);
  std::string message;
  try {
    ring[0]->all_reduce_sum(x.data(), x.size());  // rank 1 never joins this collective
  } catch (const CollectiveError& e) {
    message = e.what();
  }
  CHECK(contains(message, "host ring, rank 0 of 2"));
  CHECK(contains(message, "no data from rank 1 for 400 ms"));
}

TEST(host_ring_refuses_a_peer_that_is_not_its_previous_rank) {
  HostRing ring(0, 2, std::chrono::milliseconds(2000), "127.0.0.1");
  // A second listener stands in for rank 1; a stray client, not rank 1, connects to rank 0.
  HostRing next(1, 2, std::chrono::milliseconds(2000), "127.0.0.1");
  std::thread stray([&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(ring.port()));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      const char junk[12] = "not a ring";
      (void)::send(fd, junk, sizeof(junk), 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ::close(fd);
  });
  std::string message;
  try {
    ring.connect("127.0.0.1", next.port());
  } catch (const CollectiveError& e) {
    message = e.what();
  }
  stray.join();
  CHECK(contains(message, "not rank 1 of 2"));
}
