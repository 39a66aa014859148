// nccl.h: NCCL opened at run time (dlopen; never linked, so the addon loads on machines without it),
// the collectives of data-parallel training (issue 23: gradients all-reduced across trainer ranks,
// weights broadcast to inference ranks). The library is searched as core/dynamic_library.h
// describes (libnccl.so.2), every function s3 calls is resolved up front, and ncclGetVersion must
// say 2.18 or newer (non-blocking communicators with a config); anything else is refused with the
// file and the reason. A Communicator is one rank's membership, created non-blocking so every
// wait has a deadline: a collective that does not finish in time aborts the communicator and
// throws NcclTimeout naming the rank and the collective, instead of hanging.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dynamic_library.h"
#include "cuda/nccl_api.h"

namespace s3::cuda {

constexpr int kMinNcclVersion = 21800;  // 2.18: ncclCommInitRankConfig with splitShare, non-blocking

struct NcclLibrary {
  DynamicLibrary library;
  nccl::Functions api{};
  int version = 0;
  std::string path;
  std::string version_text() const { return library_version_text(size_t(version)); }
};

struct NcclLoad {
  std::shared_ptr<const NcclLibrary> library;
  std::string error;
};

// Searches everywhere core/dynamic_library.h looks.
NcclLoad load_nccl();
// Searches only `directories` (tests of the refusals).
NcclLoad load_nccl_from(const std::vector<std::string>& directories);
// The process's NCCL, opened on first use and kept.
const NcclLoad& process_nccl();

class NcclError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class NcclTimeout : public NcclError {
 public:
  using NcclError::NcclError;
};

// A new unique id (rank 0 makes it; the others receive it through the rendezvous).
nccl::UniqueId nccl_unique_id(const NcclLibrary& library);

class Communicator {
 public:
  // Joins the communicator of `ranks` ranks named by `id` as `rank`, on the current CUDA device;
  // waits at most `timeout` for every rank to arrive.
  Communicator(std::shared_ptr<const NcclLibrary> library, const nccl::UniqueId& id, int ranks, int rank,
               std::chrono::milliseconds timeout);
  ~Communicator();  // destroys it (aborts it when a collective failed or timed out)
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int ranks() const { return ranks_; }
  int rank() const { return rank_; }

  // Queued on `stream`: data [count] f32 summed over every rank, in place.
  void all_reduce_sum(float* data, size_t count, cudaStream_t stream);
  // Queued on `stream`: data [bytes] from `root` to every rank, in place.
  void broadcast(void* data, size_t bytes, int root, cudaStream_t stream);
  // Waits until the stream's work (the collectives queued on it) is done, at most `timeout`; on
  // expiry or an asynchronous NCCL error, aborts the communicator and throws (NcclTimeout names
  // `what`, the rank and the wait).
  void wait(cudaStream_t stream, const char* what, std::chrono::milliseconds timeout);

 private:
  void check(nccl::Result result, const char* what);
  // Polls ncclCommGetAsyncError until the last non-blocking call is done, at most `timeout`.
  void settle(const char* what, std::chrono::milliseconds timeout);
  void abort();
  // Aborts and throws NcclTimeout for `what` after `timeout`.
  [[noreturn]] void timed_out(const char* what, std::chrono::milliseconds timeout);

  std::shared_ptr<const NcclLibrary> library_;
  nccl::Comm comm_ = nullptr;
  int ranks_ = 0, rank_ = 0;
  bool aborted_ = false;
};

}  // namespace s3::cuda
