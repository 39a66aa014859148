// Choosing the device; see device.h.
#include "model/device.h"

#include <stdexcept>

#ifdef S3_WITH_CUDA
#include "cuda/cublaslt.h"
#include "cuda/device_info.h"
#endif

namespace s3::model {

const char* device_name(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

std::optional<DeviceChoice> parse_device_choice(std::string_view name) {
  if (name == "auto") return DeviceChoice::Auto;
  if (name == "cpu") return DeviceChoice::Cpu;
  if (name == "cuda") return DeviceChoice::Cuda;
  return std::nullopt;
}

DeviceAvailability device_availability() {
#ifndef S3_WITH_CUDA
  return {false, "this addon was built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"};
#else
  const cuda::DeviceQuery query = cuda::query_devices();
  if (query.device_count == 0) return {false, "no CUDA device is visible (" + query.error + ")"};
  const cuda::DeviceInfo& device = query.devices.front();
  if (device.compute_major < 8) {
    return {false, "CUDA device 0 (" + device.name + ") has compute capability " + std::to_string(device.compute_major) + "." +
                       std::to_string(device.compute_minor) + "; s3's kernels need 8.0 (Ampere) or newer"};
  }
  const cuda::CublasLtLoad& lt = cuda::cublaslt();
  if (lt.library == nullptr) return {false, lt.error};
  return {true, ""};
#endif
}

Device resolve_device(DeviceChoice choice) {
  if (choice == DeviceChoice::Cpu) return Device::Cpu;
  const DeviceAvailability availability = device_availability();
  if (availability.cuda_usable) return Device::Cuda;
  if (choice == DeviceChoice::Auto) return Device::Cpu;
  throw std::runtime_error("--device cuda: " + availability.cuda_reason + "; use --device cpu (or auto) to run on the CPU");
}

}  // namespace s3::model
