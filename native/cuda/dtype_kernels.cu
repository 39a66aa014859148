// Elementwise dtype-conversion kernels; see dtype_kernels.h.
#include "core/dtype.h"
#include "cuda/dtype_kernels.h"

namespace s3::cuda {
namespace {

constexpr int kThreads = 256;

template <typename Src, typename Dst, Dst (*Convert)(Src)>
__global__ void convert_kernel(const Src* src, Dst* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    dst[i] = Convert(src[i]);
  }
}

unsigned grid_for(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 ? (blocks == 0 ? 1 : blocks) : 65535);
}

}  // namespace

void bf16_to_f32(const uint16_t* src, float* dst, size_t n, cudaStream_t stream) {
  convert_kernel<uint16_t, float, s3::bf16_to_f32><<<grid_for(n), kThreads, 0, stream>>>(src, dst, n);
}
void f32_to_bf16(const float* src, uint16_t* dst, size_t n, cudaStream_t stream) {
  convert_kernel<float, uint16_t, s3::f32_to_bf16><<<grid_for(n), kThreads, 0, stream>>>(src, dst, n);
}
void fp8e4m3_to_f32(const uint8_t* src, float* dst, size_t n, cudaStream_t stream) {
  convert_kernel<uint8_t, float, s3::fp8e4m3_to_f32><<<grid_for(n), kThreads, 0, stream>>>(src, dst, n);
}
void f32_to_fp8e4m3(const float* src, uint8_t* dst, size_t n, cudaStream_t stream) {
  convert_kernel<float, uint8_t, s3::f32_to_fp8e4m3><<<grid_for(n), kThreads, 0, stream>>>(src, dst, n);
}

}  // namespace s3::cuda
