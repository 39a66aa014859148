// collective_bench.h: the host ring's all-reduce (core/host_ring.h) timed for `swarm bench
// allreduce`: `ranks` ranks as threads of this process on loopback, each summing `floats` f32 values.
// Bus bandwidth is the usual all-reduce figure, bytes · 2(R − 1)/R per second: what each rank sends
// (and receives), comparable across group sizes and with the machine's memory bandwidth.
#pragma once

#include <cstddef>
#include <vector>

namespace s3::bench {

struct HostRingBenchFigures {
  int ranks = 0;
  size_t floats = 0;
  double best_seconds = 0, median_seconds = 0;
  double algorithm_gbytes_per_s = 0;  // floats · 4 / median
  double bus_gbytes_per_s = 0;        // floats · 4 · 2(R − 1)/R / median
  bool same_on_every_rank = false;    // the sums' bits agree across ranks (checked after the last repetition)
};

// std::invalid_argument for ranks < 2 or floats < ranks.
HostRingBenchFigures bench_host_ring(int ranks, size_t floats, int repetitions);

}  // namespace s3::bench
