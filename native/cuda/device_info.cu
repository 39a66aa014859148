// CUDA device discovery through the statically linked runtime; see device_info.h.
#include "cuda/device_info.h"

#include <cuda_runtime.h>

#include <stdexcept>

namespace s3::cuda {

DeviceQuery query_devices() {
  DeviceQuery query;
  cudaRuntimeGetVersion(&query.runtime_version);
  cudaDriverGetVersion(&query.driver_version);  // leaves 0 when no driver is installed

  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // Without a driver this fails (cudaErrorInsufficientDriver / cudaErrorNoDevice); the count
    // stays 0 and the CPU backend is used.
    query.device_count = 0;
    query.error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return query;
  }
  query.device_count = count;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      query.error = "cudaGetDeviceProperties failed for device " + std::to_string(i);
      cudaGetLastError();
      continue;
    }
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.total_memory = prop.totalGlobalMem;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    query.devices.push_back(info);
  }
  return query;
}

DeviceInfo first_device() {
  const DeviceQuery query = query_devices();
  if (query.devices.empty()) throw std::runtime_error("device cuda: no CUDA device is visible (" + query.error + ")");
  return query.devices.front();
}

DeviceMemory first_device_memory() {
  first_device();
  DeviceMemory memory;
  const cudaError_t status = cudaSetDevice(0) == cudaSuccess ? cudaMemGetInfo(&memory.free_bytes, &memory.total_bytes) : cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string("device cuda: cudaMemGetInfo failed (") + cudaGetErrorString(status) + ")");
  return memory;
}

}  // namespace s3::cuda
