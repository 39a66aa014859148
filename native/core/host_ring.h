// host_ring.h: a Collective (core/collective.h) over TCP, the ranks in a ring: each rank listens on
// a port, connects to the next rank (rank + 1 mod ranks) and is connected to by the previous one.
// The rendezvous that tells each rank its successor's address is the caller's (the swarm process
// serves it over HTTP). all_reduce_sum is the ring reduce-scatter then all-gather of a fixed chunk
// split, so each element is summed once, in the same order on every run, and copied to the others:
// every rank ends with the same bits. Buffers go in pieces of at most kPieceFloats per rank, so
// memory beyond the caller's buffer stays small whatever the model. No library, no device: the
// data-parallel trainer's path on the CPU, and the fallback for CUDA trainers without NCCL.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"

namespace s3 {

class HostRing final : public Collective {
 public:
  static constexpr size_t kPieceFloats = size_t(1) << 20;  // 4 MiB per rank and exchange

  // Rank `rank` of `ranks`, listening on `bind_host` (port 0: any free port, see port()); every
  // later wait (connecting, each exchange) lasts at most `timeout`.
  HostRing(int rank, int ranks, std::chrono::milliseconds timeout, const std::string& bind_host = "0.0.0.0", int port = 0);
  ~HostRing() override;
  HostRing(const HostRing&) = delete;
  HostRing& operator=(const HostRing&) = delete;

  int port() const { return port_; }
  // Connects to the next rank at next_host:next_port and accepts the previous rank, each side
  // checking the other's rank and group size. Blocks (at most the timeout); one call per ring.
  void connect(const std::string& next_host, int next_port);
  bool connected() const { return connected_; }

  int ranks() const override { return ranks_; }
  int rank() const override { return rank_; }
  std::string description() const override;
  void all_reduce_sum(float* data, size_t count) override;
  void broadcast(void* data, size_t bytes, int root) override;
  // Closes the sockets: peers blocked on this rank see it stop at once. Later calls throw.
  void close();

 private:
  int next_rank() const { return (rank_ + 1) % ranks_; }
  int previous_rank() const { return (rank_ + ranks_ - 1) % ranks_; }
  void require_ready(const char* what) const;
  // Sends `send_bytes` to the next rank while receiving `receive_bytes` from the previous one
  // (either may be 0), polling both so neither side blocks the other; deadline per call.
  void exchange(const void* send, size_t send_bytes, void* receive, size_t receive_bytes, const char* what);
  [[noreturn]] void fail(const std::string& message);
  void all_reduce_piece(float* data, size_t count);

  int rank_, ranks_;
  std::chrono::milliseconds timeout_;
  int listen_fd_ = -1, next_fd_ = -1, previous_fd_ = -1;
  int port_ = 0;
  bool connected_ = false, failed_ = false;
  std::vector<float> scratch_;
};

}  // namespace s3
