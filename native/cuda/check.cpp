// CUDA errors as exceptions; see check.h.
#include "cuda/check.h"

namespace s3::cuda {

std::string describe(const char* what, Shapes shapes) {
  std::string text = what;
  if (shapes.size() == 0) return text;
  text += " (";
  bool first = true;
  for (const auto& [name, value] : shapes) {
    text += (first ? "" : ", ") + std::string(name) + "=" + std::to_string(value);
    first = false;
  }
  return text + ")";
}

void check(cudaError_t status, const char* what, Shapes shapes) {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  const std::string message = describe(what, shapes) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  if (status == cudaErrorMemoryAllocation) throw DeviceOutOfMemory(message);
  throw CudaError(message);
}

}  // namespace s3::cuda
