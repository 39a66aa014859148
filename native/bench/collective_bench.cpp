// collective_bench.cpp: the implementation of bench/collective_bench.h.
#include "bench/collective_bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/host_ring.h"

namespace s3::bench {

HostRingBenchFigures bench_host_ring(int ranks, size_t floats, int repetitions) {
  if (ranks < 2) throw std::invalid_argument("bench_host_ring: at least 2 ranks");
  if (floats < size_t(ranks)) throw std::invalid_argument("bench_host_ring: at least one float per rank");
  if (repetitions < 1) throw std::invalid_argument("bench_host_ring: at least one repetition");
  std::vector<std::unique_ptr<HostRing>> ring;
  for (int r = 0; r < ranks; r++) ring.push_back(std::make_unique<HostRing>(r, ranks, std::chrono::seconds(120), "127.0.0.1"));
  std::vector<std::vector<float>> data(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; r++) data[size_t(r)].assign(floats, 1.0f / float(r + 1));
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<double> seconds;
  auto on_every_rank = [&](auto body) {
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
    for (const auto& e : errors)
      if (!e.empty()) throw std::runtime_error("bench_host_ring: " + e);
  };
  on_every_rank([&](int r) { ring[size_t(r)]->connect("127.0.0.1", ring[size_t((r + 1) % ranks)]->port()); });
  on_every_rank([&](int r) { ring[size_t(r)]->all_reduce_sum(data[size_t(r)].data(), floats); });  // warm-up
  for (int i = 0; i < repetitions; i++) {
    const auto start = std::chrono::steady_clock::now();
    on_every_rank([&](int r) { ring[size_t(r)]->all_reduce_sum(data[size_t(r)].data(), floats); });
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  HostRingBenchFigures f;
  f.ranks = ranks;
  f.floats = floats;
  std::sort(seconds.begin(), seconds.end());
  f.best_seconds = seconds.front();
  f.median_seconds = seconds[seconds.size() / 2];
  const double bytes = double(floats) * sizeof(float);
  f.algorithm_gbytes_per_s = bytes / f.median_seconds / 1e9;
  f.bus_gbytes_per_s = bytes * 2.0 * double(ranks - 1) / double(ranks) / f.median_seconds / 1e9;
  f.same_on_every_rank = true;
  for (int r = 1; r < ranks; r++) {
    f.same_on_every_rank = f.same_on_every_rank && std::memcmp(data[0].data(), data[size_t(r)].data(), bytes) == 0;
  }
  return f;
}

}  // namespace s3::bench
