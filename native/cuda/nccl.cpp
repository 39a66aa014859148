// Opening NCCL at run time and one rank's communicator; see nccl.h.
#include "cuda/nccl.h"

#include <mutex>
#include <thread>
#include <type_traits>

namespace s3::cuda {
namespace {

// Fills the table from the opened file, or says which symbol or version is wrong.
NcclLoad bind(DynamicLibrary library, const LibraryProbe& probe) {
  auto lib = std::make_shared<NcclLibrary>();
  lib->path = probe.path;
  std::string missing;
  auto resolve = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(library.symbol(name));
    if (slot == nullptr && missing.empty()) missing = name;
  };
  nccl::Functions& f = lib->api;
  resolve(f.GetVersion, "ncclGetVersion");
  resolve(f.GetErrorString, "ncclGetErrorString");
  resolve(f.GetLastError, "ncclGetLastError");
  resolve(f.GetUniqueId, "ncclGetUniqueId");
  resolve(f.CommInitRankConfig, "ncclCommInitRankConfig");
  resolve(f.CommDestroy, "ncclCommDestroy");
  resolve(f.CommAbort, "ncclCommAbort");
  resolve(f.CommGetAsyncError, "ncclCommGetAsyncError");
  resolve(f.AllReduce, "ncclAllReduce");
  resolve(f.Broadcast, "ncclBroadcast");
  resolve(f.GroupStart, "ncclGroupStart");
  resolve(f.GroupEnd, "ncclGroupEnd");
  // The version first: an old library that lacks newer symbols is best described by its version.
  if (f.GetVersion != nullptr && f.GetVersion(&lib->version) == nccl::kSuccess && lib->version < kMinNcclVersion) {
    return {nullptr, "NCCL " + lib->version_text() + " at " + lib->path + " is older than the " +
                         library_version_text(size_t(kMinNcclVersion)) +
                         " s3 needs (non-blocking communicators); point S3_CUDA_LIBRARY_PATH at a newer libnccl.so.2"};
  }
  if (!missing.empty()) {
    return {nullptr, "the library at " + lib->path + " does not export " + missing + "; it is not a usable NCCL"};
  }
  lib->library = std::move(library);
  return {std::move(lib), ""};
}

NcclLoad not_found(const LibraryProbe& probe, const std::string& where) {
  return {nullptr, "NCCL (libnccl.so.2) was not found in " + where + " (last error: " + probe.error +
                       "); set S3_CUDA_LIBRARY_PATH to the folder that holds it, e.g. PyTorch's site-packages/nvidia/nccl/lib"};
}

std::string result_text(const NcclLibrary& library, nccl::Result result) {
  const char* text = library.api.GetErrorString(result);
  return "ncclResult " + std::to_string(result) + (text != nullptr ? std::string(" (") + text + ")" : std::string());
}

}  // namespace

NcclLoad load_nccl() { return open_library(nccl_candidates(), nullptr, bind, not_found); }

NcclLoad load_nccl_from(const std::vector<std::string>& directories) {
  return open_library(nccl_candidates(), &directories, bind, not_found);
}

const NcclLoad& process_nccl() {
  static std::once_flag once;
  static NcclLoad load;
  std::call_once(once, [] { load = load_nccl(); });
  return load;
}

nccl::UniqueId nccl_unique_id(const NcclLibrary& library) {
  nccl::UniqueId id{};
  const nccl::Result result = library.api.GetUniqueId(&id);
  if (result != nccl::kSuccess) throw NcclError("ncclGetUniqueId: " + result_text(library, result));
  return id;
}

Communicator::Communicator(std::shared_ptr<const NcclLibrary> library, const nccl::UniqueId& id, int ranks, int rank,
                           std::chrono::milliseconds timeout)
    : library_(std::move(library)), ranks_(ranks), rank_(rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw std::invalid_argument("NCCL communicator: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                                " ranks; expected 0 ≤ rank < ranks");
  }
  nccl::Config config;
  config.blocking = 0;
  const nccl::Result result = library_->api.CommInitRankConfig(&comm_, ranks, id, rank, &config);
  if (result != nccl::kSuccess && result != nccl::kInProgress) {
    throw NcclError("ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                    "): " + result_text(*library_, result));
  }
  try {
    settle("joining the communicator", timeout);
  } catch (...) {
    abort();
    throw;
  }
}

Communicator::~Communicator() {
  if (comm_ == nullptr) return;
  if (aborted_) return;
  library_->api.CommDestroy(comm_);
}

void Communicator::abort() {
  if (comm_ != nullptr && !aborted_) library_->api.CommAbort(comm_);
  aborted_ = true;
}

void Communicator::timed_out(const char* what, std::chrono::milliseconds timeout) {
  abort();
  throw NcclTimeout(std::string(what) + " (rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) +
                    ") did not finish within " + std::to_string(timeout.count()) +
                    " ms; the communicator was aborted (a rank is missing, dead or stuck)");
}

void Communicator::check(nccl::Result result, const char* what) {
  if (result == nccl::kSuccess || result == nccl::kInProgress) return;
  const char* detail = library_->api.GetLastError(comm_);
  abort();
  throw NcclError(std::string(what) + " (rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) + "): " +
                  result_text(*library_, result) + (detail != nullptr && detail[0] != '\0' ? std::string(": ") + detail : ""));
}

void Communicator::settle(const char* what, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    nccl::Result state = nccl::kSuccess;
    check(library_->api.CommGetAsyncError(comm_, &state), what);
    if (state == nccl::kSuccess) return;
    check(state, what);
    if (std::chrono::steady_clock::now() > deadline) timed_out(what, timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Communicator::all_reduce_sum(float* data, size_t count, cudaStream_t stream) {
  if (aborted_) throw NcclError("all_reduce_sum: the communicator was aborted by an earlier failure");
  check(library_->api.AllReduce(data, data, count, nccl::kFloat32, nccl::kSum, comm_, stream), "ncclAllReduce");
}

void Communicator::broadcast(void* data, size_t bytes, int root, cudaStream_t stream) {
  if (aborted_) throw NcclError("broadcast: the communicator was aborted by an earlier failure");
  check(library_->api.Broadcast(data, data, bytes, nccl::kUint8, root, comm_, stream), "ncclBroadcast");
}

void Communicator::wait(cudaStream_t stream, const char* what, std::chrono::milliseconds timeout) {
  settle(what, timeout);  // the calls are enqueued
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) {
      abort();
      throw NcclError(std::string(what) + " (rank " + std::to_string(rank_) + "): " + cudaGetErrorString(status));
    }
    nccl::Result state = nccl::kSuccess;
    check(library_->api.CommGetAsyncError(comm_, &state), what);
    check(state, what);
    if (std::chrono::steady_clock::now() > deadline) timed_out(what, timeout);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace s3::cuda
