// The datasheet table behind nominal_device_peak; see device_peaks.h.
#include "bench/device_peaks.h"

namespace s3::bench {

const char* const kNominalPeakSource =
    "NVIDIA datasheets, dense BF16 tensor-core TFLOP/s (the quoted 2:4-sparsity figures halved)";

namespace {

struct Entry {
  const char* needle;  // matched as a substring of the CUDA device name, first match wins
  NominalDevicePeak peak;
};

// Variants before the names they contain: "GH200" holds "H200", "H100 PCIe" holds "H100".
// H100 SXM5 and H200 SXM: 1,979 sparse; H100 NVL and H200 NVL: 1,671; H100 PCIe: 1,513; A100 (SXM4
// and PCIe): 312 dense. Other GPUs are left out rather than guessed.
const Entry kTable[] = {
    {"GH200", {"GH200 (Hopper)", 989.4}},
    {"H200 NVL", {"H200 NVL", 835.5}},
    {"H200", {"H200 SXM", 989.4}},
    {"H100 NVL", {"H100 NVL", 835.5}},
    {"H100 PCIe", {"H100 PCIe", 756.5}},
    {"H100", {"H100 SXM5", 989.4}},
    {"A100", {"A100", 312.0}},
};

}  // namespace

NominalDevicePeak nominal_device_peak(const std::string& device_name) {
  for (const Entry& e : kTable) {
    if (device_name.find(e.needle) != std::string::npos) return e.peak;
  }
  return NominalDevicePeak{};
}

}  // namespace s3::bench
