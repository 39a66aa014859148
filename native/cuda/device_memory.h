// device_memory.h: device memory for one runner. A caching allocator over cudaMalloc (never managed
// memory): freed blocks go back to per-size free lists and are reused, so a step allocates nothing
// once the largest batch has been seen; running out trims the cache and tries once more, then throws
// DeviceOutOfMemory naming what was being allocated, the sizes, and what to lower. DeviceBuffer owns
// one allocation; Stream one non-blocking stream.
// S3_CUDA_POISON_MEMORY=1 (a debugging switch) fills every block allocate hands out, new or reused,
// with 0xFF bytes (NaN in f32, bf16 and fp8 e4m3) after the device is idle, so code that reads
// device memory before writing it gives NaN; compute-sanitizer's initcheck sees only cudaMalloc's
// first use, not a cached block's reuse.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace s3::cuda {

class DeviceAllocator {
 public:
  // `advice` ends the out-of-memory message ("lower kvCacheBytes or maxBatchTokens"); `poison`: fill
  // every block handed out with 0xFF bytes (default: S3_CUDA_POISON_MEMORY).
  explicit DeviceAllocator(std::string advice, bool poison = poison_memory_from_environment());
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // At least `bytes` (≥ 1) of device memory, 256-byte aligned; `what` names it in errors.
  void* allocate(size_t bytes, const char* what);
  // Returns a block from allocate to the cache.
  void release(void* pointer);
  // cudaFree of every cached (unused) block.
  void trim();

  size_t bytes_in_use() const { return in_use_bytes_; }
  size_t bytes_cached() const { return cached_bytes_; }

  // S3_CUDA_POISON_MEMORY, read once: "1"/"on" true, unset, "", "0"/"off" false; other values throw
  // std::invalid_argument naming the variable and what it takes (parse_poison_memory).
  static bool poison_memory_from_environment();
  static bool parse_poison_memory(const std::string& value);

 private:
  static size_t size_class(size_t bytes);
  void poison(void* pointer, size_t bytes) const;
  std::string advice_;
  bool poison_;
  std::map<size_t, std::vector<void*>> free_;  // size class → cached blocks
  std::map<void*, size_t> sizes_;              // every live block → its size class
  size_t in_use_bytes_ = 0, cached_bytes_ = 0;
};

// One allocation of a DeviceAllocator, returned to it when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator& allocator, size_t bytes, const char* what)
      : allocator_(&allocator), pointer_(allocator.allocate(bytes, what)), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : allocator_(std::exchange(other.allocator_, nullptr)), pointer_(std::exchange(other.pointer_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      allocator_ = std::exchange(other.allocator_, nullptr);
      pointer_ = std::exchange(other.pointer_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() {
    if (pointer_ != nullptr) allocator_->release(pointer_);
    pointer_ = nullptr;
    bytes_ = 0;
  }
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(pointer_);
  }
  size_t bytes() const { return bytes_; }

 private:
  DeviceAllocator* allocator_ = nullptr;
  void* pointer_ = nullptr;
  size_t bytes_ = 0;
};

// A buffer that grows (never shrinks) to the largest size asked for; its contents do not survive
// growing.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(const char* what) : what_(what) {}
  template <typename T>
  T* reserve(DeviceAllocator& allocator, size_t count) {
    const size_t bytes = count * sizeof(T);
    if (buffer_.bytes() < bytes) {
      buffer_.reset();
      buffer_ = DeviceBuffer(allocator, bytes, what_);
    }
    return buffer_.get<T>();
  }

 private:
  const char* what_;
  DeviceBuffer buffer_;
};

// One non-blocking stream on the current device, destroyed with the owner.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  // Waits for everything queued; throws CudaError naming `what` if any of it failed.
  void synchronize(const char* what) const;

 private:
  cudaStream_t stream_ = nullptr;
};

// A CUDA event on the current device, without timing (only for ordering streams); move-only.
class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Device-to-device copy bandwidth of the current device (bytes read plus bytes written per second,
// the median of 5 copies of 4 GiB, or less when less is free): the decode roofline's denominator.
double copy_bandwidth();

}  // namespace s3::cuda
