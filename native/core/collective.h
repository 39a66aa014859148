// collective.h: one rank's membership in a group of processes that sum and share buffers, the
// collectives of data-parallel training (issue 23): every rank's accumulated gradients are summed
// over the group before each update, so every rank takes the same AdamW step. Implementations:
// core/host_ring.h (TCP between hosts, any device, no library) and cuda/nccl_collective.h (NCCL on
// device memory). Every call has a deadline: a peer that stops or falls silent becomes a
// CollectiveError naming this rank, the peer and the collective, never a hang; a group that has
// failed once refuses every later call (its members are out of step).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace s3 {

class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int ranks() const = 0;
  virtual int rank() const = 0;
  // "host ring, rank 1 of 4" or "nccl 2.30.7, rank 1 of 4".
  virtual std::string description() const = 0;

  // Host memory: data [count] f32 summed over every rank, in place. Every rank ends with the same
  // bits, summed in an order fixed by the group's size (the same run to run, whatever the timing).
  virtual void all_reduce_sum(float* data, size_t count) = 0;
  // Host memory: data [bytes] from `root` to every rank, in place.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;

  // Device memory on CUDA stream `stream` (a cudaStream_t), finished when it returns; false when
  // this collective cannot reach device memory (the caller then goes through host memory).
  virtual bool all_reduce_sum_on_device(float* data, size_t count, void* stream) {
    (void)data, (void)count, (void)stream;
    return false;
  }
};

}  // namespace s3
