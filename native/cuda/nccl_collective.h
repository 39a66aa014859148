// nccl_collective.h: a Collective (core/collective.h) over an NCCL communicator (cuda/nccl.h), for
// CUDA trainers: gradients are summed where they live, on the device, on the trainer's stream, and
// each collective waits at most the group's timeout (then the communicator is aborted and the wait
// throws, naming the rank and the collective). Host buffers go through a device copy. NCCL's ring
// and tree sums give every rank the same bits; run to run they are fixed for a fixed group, NCCL
// version and topology (NCCL_ALGO/NCCL_PROTO pin them where the topology could differ).
// Unverified until a machine with two GPUs runs it (one-rank calls are in scripts/gpu-check.sh).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/collective.h"
#include "cuda/nccl.h"

namespace s3::cuda {

class NcclCollective final : public Collective {
 public:
  // Joins the group named by `id` (made by rank 0 with nccl_unique_id, sent by the rendezvous) as
  // `rank` of `ranks` on the current CUDA device; waits at most `timeout` there and in every call.
  NcclCollective(std::shared_ptr<const NcclLibrary> library, const nccl::UniqueId& id, int ranks, int rank,
                 std::chrono::milliseconds timeout);

  int ranks() const override { return communicator_.ranks(); }
  int rank() const override { return communicator_.rank(); }
  std::string description() const override;
  void all_reduce_sum(float* data, size_t count) override;
  void broadcast(void* data, size_t bytes, int root) override;
  bool all_reduce_sum_on_device(float* data, size_t count, void* stream) override;

 private:
  void* device_copy(const void* host, size_t bytes, cudaStream_t stream);
  std::shared_ptr<const NcclLibrary> library_;
  Communicator communicator_;
  std::chrono::milliseconds timeout_;
  bool failed_ = false;
};

}  // namespace s3::cuda
