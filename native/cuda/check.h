// check.h: every CUDA error becomes a C++ exception naming the operation and its shapes, which
// the engine hands to JavaScript as the failed request's error. Kernel launches are checked at
// once (configuration errors); faults inside a kernel surface at the next synchronization, which
// the runners check the same way, naming the step.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace s3::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device ran out of memory; the message says how much was asked for, for what, what was free,
// and which option to lower.
class DeviceOutOfMemory : public CudaError {
 public:
  using CudaError::CudaError;
};

using Shapes = std::initializer_list<std::pair<const char*, int64_t>>;

// "what (rows=128, C=1024)".
std::string describe(const char* what, Shapes shapes);

// Throws CudaError("<what (shapes)>: cudaErrorX: message") unless status is cudaSuccess. Clears the
// runtime's last error so the next check starts clean (a sticky fault stays in the context and
// every later call reports it).
void check(cudaError_t status, const char* what, Shapes shapes = {});

// After a kernel launch: checks cudaGetLastError for `kernel`.
inline void check_launch(const char* kernel, Shapes shapes = {}) { check(cudaGetLastError(), kernel, shapes); }

}  // namespace s3::cuda
