// device_peaks.h: the nominal dense BF16 tensor-core peak of the GPUs we know by name, the anchor of
// the model FLOPs utilisation (MFU) that the device benchmarks report. A GPU's datasheet peak cannot
// be measured with a register-only loop as the CPU's is (native/bench/machine_limits.h): cuBLAS
// reaches it only through warpgroup MMAs, so the figure is NVIDIA's, halved where the datasheet quotes
// it with 2:4 sparsity, and the GPU check measures the best dense BF16 GEMM beside it
// (bench/torch_train_step.py). Plain C++: the table is matched on names, so CPU tests cover it.
#pragma once
#include <string>

namespace s3::bench {

struct NominalDevicePeak {
  const char* product = "";    // the datasheet's product ("H100 SXM5"); "" when the name is not known
  double bf16_tflops = 0;      // dense BF16 (and FP16) tensor-core TFLOP/s with f32 accumulation; 0 when not known
};

// The peak of the device cudaGetDeviceProperties names `device_name` ("NVIDIA H100 80GB HBM3",
// "NVIDIA H200", "NVIDIA A100-SXM4-80GB"); an unknown name gives bf16_tflops 0, so callers report
// no MFU rather than a guessed one.
NominalDevicePeak nominal_device_peak(const std::string& device_name);

// Where the figures come from, for reports.
extern const char* const kNominalPeakSource;

}  // namespace s3::bench
