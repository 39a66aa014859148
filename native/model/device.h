// device.h: which device runs the model (`--device cpu|cuda|auto`, the engine option `device`).
// `auto` means CUDA when this addon was built with CUDA, a device is visible and cuBLASLt opens at
// a usable version; otherwise the CPU. Asking for `cuda` where that does not hold is refused with
// the reason, never silently answered on the CPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace s3::model {

enum class Device { Cpu, Cuda };
enum class DeviceChoice { Auto, Cpu, Cuda };

// "cpu" or "cuda".
const char* device_name(Device device);
// "auto", "cpu" or "cuda"; nullopt for anything else.
std::optional<DeviceChoice> parse_device_choice(std::string_view name);

// What this machine offers: whether CUDA can run the model, and why not when it cannot.
struct DeviceAvailability {
  bool cuda_usable = false;
  std::string cuda_reason;  // empty when usable: e.g. "no CUDA device is visible (cudaErrorNoDevice: ...)"
};

// Probes once per call (device query, cuBLASLt load); never throws.
DeviceAvailability device_availability();

// The device `choice` means here. Throws std::runtime_error for DeviceChoice::Cuda when CUDA is not
// usable, with the reason and what to do about it.
Device resolve_device(DeviceChoice choice);

}  // namespace s3::model
