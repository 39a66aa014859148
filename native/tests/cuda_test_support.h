// cuda_test_support.h: what the CUDA tests share: skipping where CUDA cannot run, device arrays to
// move test data up and down, seeded normal test values, a bit-for-bit comparison, and llama.cpp's
// test-backend-ops comparison (any NaN fails, an inf must match in sign, then NMSE = Σ(a − b)² / Σ b²
// against a threshold stated in the test).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/device.h"
#include "tests/test_framework.h"
#ifdef S3_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace s3test {

// Skips the test unless the model can run on CUDA here (device, sm_80+, cuBLASLt).
inline void require_cuda() {
  const s3::model::DeviceAvailability availability = s3::model::device_availability();
  if (!availability.cuda_usable) SKIP("CUDA is not usable here: " + availability.cuda_reason);
}

// Skips the test unless a CUDA device is visible (the kernels alone need no cuBLASLt).
inline void require_gpu() {
#ifdef S3_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    SKIP("no CUDA device is visible");
  }
#else
  SKIP("built without CUDA");
#endif
}

// n values ~ N(0, scale²) from mt19937(seed).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// How many values differ in any bit (every value of the longer one counts when the sizes differ).
inline size_t exact_mismatches(const std::vector<float>& a, const std::vector<float>& b) {
  size_t count = a.size() == b.size() ? 0 : a.size() + b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); i++) count += std::memcmp(&a[i], &b[i], 4) != 0;
  return count;
}

// NMSE of got against want, or +inf when a NaN appears or an inf does not match.
inline double nmse(const float* got, const float* want, size_t n) {
  double error = 0.0, norm = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (std::isnan(got[i]) || std::isnan(want[i])) return INFINITY;
    if (std::isinf(got[i]) || std::isinf(want[i])) {
      if (got[i] != want[i]) return INFINITY;
      continue;
    }
    error += (double(got[i]) - double(want[i])) * (double(got[i]) - double(want[i]));
    norm += double(want[i]) * double(want[i]);
  }
  return norm > 0 ? error / norm : error;
}

// Checks NMSE ≤ threshold and prints the measured value (the figures the GPU check records).
#define CHECK_NMSE(what, got, want, n, threshold)                                                   \
  do {                                                                                              \
    const double s3_nmse = s3test::nmse((got), (want), (n));                                        \
    std::printf("  [nmse] %s: %.3g (threshold %.1g)\n", std::string(what).c_str(), s3_nmse, double(threshold)); \
    CHECK(s3_nmse <= (threshold));                                                                  \
  } while (0)

#ifdef S3_WITH_CUDA

inline void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw TestFailure{std::string(what) + ": " + cudaGetErrorString(status)};
}

// A device copy of a host vector, freed when it goes away.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) { cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p_), (n > 0 ? n : 1) * sizeof(T)), "cudaMalloc"); }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void upload(const std::vector<T>& host) { cuda_ok(cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload"); }
  std::vector<T> download() const {
    cuda_ok(cudaDeviceSynchronize(), "kernel");
    std::vector<T> host(n_);
    cuda_ok(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

#endif

}  // namespace s3test
