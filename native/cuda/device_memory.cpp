// The caching device allocator and the stream; see device_memory.h.
#include "cuda/device_memory.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/environment_switch.h"
#include "cuda/check.h"

namespace s3::cuda {
namespace {

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  return text;
}

}  // namespace

DeviceAllocator::DeviceAllocator(std::string advice, bool poison) : advice_(std::move(advice)), poison_(poison) {}

bool DeviceAllocator::parse_poison_memory(const std::string& value) {
  return parse_environment_switch("S3_CUDA_POISON_MEMORY", value, "fill device memory with 0xFF bytes when handed out");
}

bool DeviceAllocator::poison_memory_from_environment() {
  static const bool from_environment = [] {
    const char* value = std::getenv("S3_CUDA_POISON_MEMORY");
    return parse_poison_memory(value != nullptr ? value : "");
  }();
  return from_environment;
}

// The block's last user may still run on any stream, and the fill must land before its next user's
// first kernel on any stream: the device is idle before and after.
void DeviceAllocator::poison(void* pointer, size_t bytes) const {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (S3_CUDA_POISON_MEMORY)");
  check(cudaMemset(pointer, 0xFF, bytes), "cudaMemset (S3_CUDA_POISON_MEMORY)", {{"bytes", int64_t(bytes)}});
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (S3_CUDA_POISON_MEMORY)");
}

DeviceAllocator::~DeviceAllocator() {
  trim();
  for (const auto& [pointer, size] : sizes_) cudaFree(pointer);  // blocks still in use at teardown
}

size_t DeviceAllocator::size_class(size_t bytes) {
  // 512-byte steps below 1 MiB, 2 MiB steps above: little waste, few distinct classes.
  const size_t step = bytes < (size_t(1) << 20) ? 512 : (size_t(2) << 20);
  return (bytes + step - 1) / step * step;
}

void* DeviceAllocator::allocate(size_t bytes, const char* what) {
  const size_t size = size_class(bytes > 0 ? bytes : 1);
  auto cached = free_.find(size);
  if (cached != free_.end() && !cached->second.empty()) {
    void* pointer = cached->second.back();
    cached->second.pop_back();
    cached_bytes_ -= size;
    in_use_bytes_ += size;
    if (poison_) poison(pointer, size);
    return pointer;
  }
  void* pointer = nullptr;
  cudaError_t status = cudaMalloc(&pointer, size);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    trim();
    status = cudaMalloc(&pointer, size);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceOutOfMemory("CUDA out of memory allocating " + mib(size) + " for " + what + " (" + mib(free_bytes) +
                            " free of " + mib(total_bytes) + ", " + mib(in_use_bytes_) + " held by this runner); " +
                            advice_);
  }
  check(status, "cudaMalloc", {{"bytes", int64_t(size)}});
  sizes_.emplace(pointer, size);
  in_use_bytes_ += size;
  if (poison_) poison(pointer, size);
  return pointer;
}

void DeviceAllocator::release(void* pointer) {
  auto it = sizes_.find(pointer);
  if (it == sizes_.end()) return;
  free_[it->second].push_back(pointer);
  in_use_bytes_ -= it->second;
  cached_bytes_ += it->second;
}

void DeviceAllocator::trim() {
  for (auto& [size, pointers] : free_) {
    for (void* pointer : pointers) {
      cudaFree(pointer);
      sizes_.erase(pointer);
    }
    cached_bytes_ -= size * pointers.size();
    pointers.clear();
  }
}

Stream::Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Stream::synchronize(const char* what) const { check(cudaStreamSynchronize(stream_), what); }

Event::Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) cudaEventDestroy(event_);
    event_ = other.event_;
    other.event_ = nullptr;
  }
  return *this;
}

double copy_bandwidth() {
  size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const size_t bytes = std::min(size_t(4) << 30, free_bytes / 4);
  DeviceAllocator allocator("lower the copy size");
  DeviceBuffer a(allocator, bytes, "the bandwidth test"), b(allocator, bytes, "the bandwidth test");
  check(cudaMemset(a.get(), 1, bytes), "cudaMemset");
  std::vector<double> seconds;
  for (int r = 0; r < 6; r++) {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto start = std::chrono::steady_clock::now();
    check(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy", {{"bytes", int64_t(bytes)}});
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (r > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * double(bytes) / seconds[seconds.size() / 2];
}

}  // namespace s3::cuda
