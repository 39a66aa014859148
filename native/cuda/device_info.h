// What the CUDA runtime says about this machine: driver, runtime and devices. Plain C++ header
// (no CUDA types), so code compiled without nvcc can call it when S3_WITH_CUDA is defined.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace s3::cuda {

// One visible CUDA device.
struct DeviceInfo {
  int index = 0;
  std::string name;
  std::size_t total_memory = 0;  // bytes
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
};

// The outcome of asking the runtime for devices. Without a driver or GPU, device_count is 0
// and error says why; that is the normal state of a CPU-only machine, not a failure.
struct DeviceQuery {
  int device_count = 0;
  int driver_version = 0;   // e.g. 13000 for 13.0; 0 when no driver is installed
  int runtime_version = 0;  // version of the statically linked CUDA runtime
  std::vector<DeviceInfo> devices;
  std::string error;
};

// Queries the runtime once per call; never throws.
DeviceQuery query_devices();

// Device 0, the one the runner and the trainer use; throws std::runtime_error("device cuda: no CUDA
// device is visible (<why>)") when there is none.
DeviceInfo first_device();

// Free and total bytes of device 0's memory now (cudaMemGetInfo); throws std::runtime_error as
// first_device does, or naming the runtime's error.
struct DeviceMemory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
DeviceMemory first_device_memory();

}  // namespace s3::cuda
