// test_bench_device_peaks.cpp: the nominal GPU peaks behind the device benchmarks' MFU, matched on
// the names the CUDA runtime gives: variants that contain another product's name (GH200 holds H200,
// H100 PCIe holds H100) get their own figure, and an unknown GPU gets none rather than a guess.
#include <string>

#include "bench/device_peaks.h"
#include "tests/test_framework.h"

using s3::bench::nominal_device_peak;

TEST(nominal_device_peaks_match_the_runtime_names) {
  CHECK_EQ(nominal_device_peak("NVIDIA H100 80GB HBM3").bf16_tflops, 989.4);
  CHECK_EQ(std::string(nominal_device_peak("NVIDIA H100 80GB HBM3").product), std::string("H100 SXM5"));
  CHECK_EQ(nominal_device_peak("NVIDIA H100 PCIe").bf16_tflops, 756.5);
  CHECK_EQ(nominal_device_peak("NVIDIA H100 NVL").bf16_tflops, 835.5);
  CHECK_EQ(nominal_device_peak("NVIDIA H200").bf16_tflops, 989.4);
  CHECK_EQ(nominal_device_peak("NVIDIA H200 NVL").bf16_tflops, 835.5);
  CHECK_EQ(std::string(nominal_device_peak("NVIDIA GH200 480GB").product), std::string("GH200 (Hopper)"));
  CHECK_EQ(nominal_device_peak("NVIDIA A100-SXM4-80GB").bf16_tflops, 312.0);
  CHECK_EQ(nominal_device_peak("NVIDIA A100 80GB PCIe").bf16_tflops, 312.0);
}

TEST(nominal_device_peaks_leave_unknown_gpus_without_a_figure) {
  for (const char* name : {"", "NVIDIA GeForce RTX 4090", "NVIDIA L40S", "NVIDIA B200", "s3 emulated device"}) {
    CHECK_EQ(nominal_device_peak(name).bf16_tflops, 0.0);
    CHECK_EQ(std::string(nominal_device_peak(name).product), std::string(""));
  }
}
