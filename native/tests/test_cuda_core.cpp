// CUDA core kernels against the CPU: dtype conversions bit-identical over every bf16/fp8 value and
// random f32 bit patterns, Philox uniforms identical to the CPU's. Skipped without CUDA or a GPU.
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/philox.h"
#include "tests/test_framework.h"
#ifdef S3_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/device_info.h"
#include "cuda/dtype_kernels.h"
#include "cuda/philox_kernels.h"
#endif

#ifdef S3_WITH_CUDA
namespace {

void require_gpu() {
  const s3::cuda::DeviceQuery query = s3::cuda::query_devices();
  if (query.device_count == 0) SKIP("no CUDA device visible (" + query.error + ")");
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) s3test::fail(__FILE__, __LINE__, std::string(what) + ": " + cudaGetErrorString(status));
}

// Copies `in` to the device, runs `launch(d_in, d_out, n)`, copies the result back.
template <typename In, typename Out, typename Launch>
std::vector<Out> run_on_device(const std::vector<In>& in, Launch launch) {
  In* d_in = nullptr;
  Out* d_out = nullptr;
  check_cuda(cudaMalloc(&d_in, in.size() * sizeof(In)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_out, in.size() * sizeof(Out)), "cudaMalloc");
  check_cuda(cudaMemcpy(d_in, in.data(), in.size() * sizeof(In), cudaMemcpyHostToDevice), "copy in");
  launch(d_in, d_out, in.size());
  check_cuda(cudaGetLastError(), "kernel launch");
  std::vector<Out> out(in.size());
  check_cuda(cudaMemcpy(out.data(), d_out, out.size() * sizeof(Out), cudaMemcpyDeviceToHost), "copy out");
  cudaFree(d_in);
  cudaFree(d_out);
  return out;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

std::vector<float> f32_test_inputs() {
  std::vector<float> inputs;
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 20; ++i) {
    uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    inputs.push_back(f);
  }
  for (int i = 0; i < 1 << 16; ++i) inputs.push_back(float(i - 32768) * 0.03125f);  // the fp8 range, densely
  return inputs;
}

}  // namespace

TEST(cuda_bf16_and_fp8_decode_match_cpu_for_every_value) {
  require_gpu();
  std::vector<uint16_t> bf16(65536);
  for (int i = 0; i < 65536; ++i) bf16[i] = uint16_t(i);
  const auto f = run_on_device<uint16_t, float>(bf16, [](const uint16_t* in, float* out, size_t n) { s3::cuda::bf16_to_f32(in, out, n, 0); });
  for (int i = 0; i < 65536; ++i) CHECK_EQ(bits_of(f[i]), bits_of(s3::bf16_to_f32(uint16_t(i))));
  std::vector<uint8_t> fp8(256);
  for (int i = 0; i < 256; ++i) fp8[i] = uint8_t(i);
  const auto g = run_on_device<uint8_t, float>(fp8, [](const uint8_t* in, float* out, size_t n) { s3::cuda::fp8e4m3_to_f32(in, out, n, 0); });
  for (int i = 0; i < 256; ++i) CHECK_EQ(bits_of(g[i]), bits_of(s3::fp8e4m3_to_f32(uint8_t(i))));
}

TEST(cuda_f32_encode_matches_cpu_rounding) {
  require_gpu();
  const std::vector<float> inputs = f32_test_inputs();
  const auto bf16 = run_on_device<float, uint16_t>(inputs, [](const float* in, uint16_t* out, size_t n) { s3::cuda::f32_to_bf16(in, out, n, 0); });
  const auto fp8 = run_on_device<float, uint8_t>(inputs, [](const float* in, uint8_t* out, size_t n) { s3::cuda::f32_to_fp8e4m3(in, out, n, 0); });
  for (size_t i = 0; i < inputs.size(); ++i) {
    CHECK_EQ(bf16[i], s3::f32_to_bf16(inputs[i]));
    CHECK_EQ(fp8[i], s3::f32_to_fp8e4m3(inputs[i]));
  }
}

TEST(cuda_philox_uniforms_match_cpu) {
  require_gpu();
  const size_t n = 1 << 18;
  float* d_out = nullptr;
  check_cuda(cudaMalloc(&d_out, n * sizeof(float)), "cudaMalloc");
  const uint64_t seed = 0x0123456789ABCDEFull, first = (uint64_t(1) << 32) - 1000;
  s3::cuda::philox_uniforms(seed, first, 31, 2, d_out, n, 0);
  check_cuda(cudaGetLastError(), "kernel launch");
  std::vector<float> out(n);
  check_cuda(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost), "copy out");
  cudaFree(d_out);
  for (size_t i = 0; i < n; ++i) CHECK_EQ(bits_of(out[i]), bits_of(s3::philox_uniform(seed, first + i, 31, 2)));
}

#else

TEST(cuda_core_kernels) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
