// test_cuda_device_memory.cpp: the caching device allocator (cuda/device_memory.h): a released
// block comes back for a request of its size class with the bytes its last user left, or filled
// with 0xFF bytes (new or reused) when poisoning is on; the S3_CUDA_POISON_MEMORY setting's values;
// running out of memory names what was asked for and the advice. The setting's test runs wherever
// CUDA was compiled; the others need a GPU.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/cuda_test_support.h"
#include "tests/test_framework.h"
#ifdef S3_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/device_memory.h"

namespace {

std::vector<uint8_t> device_bytes(const void* pointer, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  s3test::cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  s3test::cuda_ok(cudaMemcpy(host.data(), pointer, bytes, cudaMemcpyDeviceToHost), "download");
  return host;
}

size_t count_of(const std::vector<uint8_t>& bytes, uint8_t value) {
  size_t n = 0;
  for (uint8_t b : bytes) n += b == value;
  return n;
}

}  // namespace

TEST(cuda_poison_memory_setting_accepts_on_and_off_and_refuses_the_rest) {
  using s3::cuda::DeviceAllocator;
  CHECK(DeviceAllocator::parse_poison_memory("1"));
  CHECK(DeviceAllocator::parse_poison_memory("on"));
  CHECK(!DeviceAllocator::parse_poison_memory(""));
  CHECK(!DeviceAllocator::parse_poison_memory("0"));
  CHECK(!DeviceAllocator::parse_poison_memory("off"));
  for (const char* bad : {"yes", "true", "2", "ON "}) {
    try {
      DeviceAllocator::parse_poison_memory(bad);
      CHECK(false);
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK(message.find("S3_CUDA_POISON_MEMORY='" + std::string(bad) + "'") != std::string::npos);
      CHECK(message.find("expected 1 or on") != std::string::npos);
    }
  }
}

TEST(cuda_allocator_reuses_a_released_block_as_its_last_user_left_it) {
  s3test::require_gpu();
  s3::cuda::DeviceAllocator allocator("lower nothing", false);
  void* first = allocator.allocate(1000, "the first block");
  CHECK_EQ(allocator.bytes_in_use(), size_t(1024));  // 512-byte size classes below 1 MiB
  s3test::cuda_ok(cudaMemset(first, 0x5A, 1000), "cudaMemset");
  allocator.release(first);
  CHECK_EQ(allocator.bytes_in_use(), size_t(0));
  CHECK_EQ(allocator.bytes_cached(), size_t(1024));
  void* again = allocator.allocate(600, "the same size class");
  CHECK(again == first);
  CHECK_EQ(count_of(device_bytes(again, 1000), 0x5A), size_t(1000));  // not cleared: the caller writes first
  void* other = allocator.allocate(2000, "another size class");
  CHECK(other != first);
  CHECK_EQ(allocator.bytes_in_use(), size_t(1024 + 2048));
  allocator.release(again);
  allocator.release(other);
  allocator.trim();
  CHECK_EQ(allocator.bytes_cached(), size_t(0));
}

TEST(cuda_allocator_poisons_new_and_reused_blocks_when_asked) {
  s3test::require_gpu();
  s3::cuda::DeviceAllocator allocator("lower nothing", true);
  for (const size_t bytes : {size_t(1000), size_t(3) << 20}) {  // a small size class and a 2 MiB one
    void* block = allocator.allocate(bytes, "a new block");
    CHECK_EQ(count_of(device_bytes(block, bytes), 0xFF), bytes);
    s3test::cuda_ok(cudaMemset(block, 0, bytes), "cudaMemset");
    allocator.release(block);
    void* reused = allocator.allocate(bytes, "a reused block");
    CHECK(reused == block);
    CHECK_EQ(count_of(device_bytes(reused, bytes), 0xFF), bytes);
    allocator.release(reused);
  }
}

TEST(cuda_allocator_out_of_memory_names_the_request_and_the_advice) {
  s3test::require_gpu();
  s3::cuda::DeviceAllocator allocator("lower the test's request", false);
  try {
    allocator.allocate(size_t(1) << 50, "a petabyte");  // more than any device has
    CHECK(false);
  } catch (const s3::cuda::DeviceOutOfMemory& e) {
    const std::string message = e.what();
    CHECK(message.find("CUDA out of memory allocating 1073741824.0 MiB for a petabyte") == 0);
    CHECK(message.find("; lower the test's request") != std::string::npos);
  }
  CHECK_EQ(allocator.bytes_in_use(), size_t(0));
  // The failure leaves no error behind: the next allocation works.
  void* block = allocator.allocate(256, "after the failure");
  CHECK(block != nullptr);
  allocator.release(block);
}

#else
TEST(cuda_device_memory) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }
#endif
