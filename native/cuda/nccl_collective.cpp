// nccl_collective.cpp: the implementation of cuda/nccl_collective.h.
#include "cuda/nccl_collective.h"

#include "cuda/check.h"

namespace s3::cuda {

namespace {

// A device buffer for a host collective's data, freed on every path out.
struct ScopedDeviceBuffer {
  void* pointer = nullptr;
  ~ScopedDeviceBuffer() {
    if (pointer != nullptr) cudaFree(pointer);
  }
};

}  // namespace

NcclCollective::NcclCollective(std::shared_ptr<const NcclLibrary> library, const nccl::UniqueId& id, int ranks, int rank,
                               std::chrono::milliseconds timeout)
    : library_(library), communicator_(std::move(library), id, ranks, rank, timeout), timeout_(timeout) {}

std::string NcclCollective::description() const {
  return "nccl " + library_->version_text() + ", rank " + std::to_string(rank()) + " of " + std::to_string(ranks());
}

bool NcclCollective::all_reduce_sum_on_device(float* data, size_t count, void* stream) {
  if (failed_) throw CollectiveError(description() + ": all_reduce_sum: the communicator failed earlier and cannot be used again");
  if (count == 0) return true;
  auto* s = static_cast<cudaStream_t>(stream);
  try {
    communicator_.all_reduce_sum(data, count, s);
    communicator_.wait(s, "all_reduce_sum", timeout_);
  } catch (const NcclError& e) {
    failed_ = true;
    throw CollectiveError(e.what());
  }
  return true;
}

void NcclCollective::all_reduce_sum(float* data, size_t count) {
  if (count == 0) return;
  ScopedDeviceBuffer buffer;
  check(cudaMalloc(&buffer.pointer, count * sizeof(float)), "a device buffer for a host all-reduce",
        {{"bytes", int64_t(count * sizeof(float))}});
  check(cudaMemcpy(buffer.pointer, data, count * sizeof(float), cudaMemcpyHostToDevice), "uploading a host all-reduce");
  all_reduce_sum_on_device(static_cast<float*>(buffer.pointer), count, nullptr);
  check(cudaMemcpy(data, buffer.pointer, count * sizeof(float), cudaMemcpyDeviceToHost), "downloading a host all-reduce");
}

void NcclCollective::broadcast(void* data, size_t bytes, int root) {
  if (failed_) throw CollectiveError(description() + ": broadcast: the communicator failed earlier and cannot be used again");
  if (bytes == 0) return;
  ScopedDeviceBuffer buffer;
  check(cudaMalloc(&buffer.pointer, bytes), "a device buffer for a broadcast", {{"bytes", int64_t(bytes)}});
  check(cudaMemcpy(buffer.pointer, data, bytes, cudaMemcpyHostToDevice), "uploading a broadcast");
  try {
    communicator_.broadcast(buffer.pointer, bytes, root, nullptr);
    communicator_.wait(nullptr, "broadcast", timeout_);
  } catch (const NcclError& e) {
    failed_ = true;
    throw CollectiveError(e.what());
  }
  check(cudaMemcpy(data, buffer.pointer, bytes, cudaMemcpyDeviceToHost), "downloading a broadcast");
}

}  // namespace s3::cuda
