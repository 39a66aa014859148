// FP8 weights from f32 on the device; see fp8_weights.h.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "cuda/check.h"
#include "cuda/fp8_weights.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kBlock = 128;   // the 128 × 128 scale block
constexpr int kThreads = 256;
constexpr float kFp8Max = 448.0f;

// Block (cb, rb): one 128 × 128 weight block; its largest magnitude (an order-free maximum), then
// its scale and bytes.
__global__ void __launch_bounds__(kThreads) quantize_kernel(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales,
                                                            int64_t scale_stride) {
  __shared__ float scratch[32];
  const int64_t r0 = int64_t(blockIdx.y) * kBlock, c0 = int64_t(blockIdx.x) * kBlock;
  const int64_t r_end = min(rows, r0 + kBlock), c_end = min(cols, c0 + kBlock);
  const int width = int(c_end - c0), count = int((r_end - r0) * width);
  float max_abs = 0.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) max_abs = fmaxf(max_abs, fabsf(w[(r0 + i / width) * cols + c0 + i % width]));
  max_abs = block_max(max_abs, scratch, 0.0f);
  const float scale = max_abs > 0.0f ? max_abs / kFp8Max : 1.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) {
    const int64_t at = (r0 + i / width) * cols + c0 + i % width;
    bytes[at] = f32_to_fp8e4m3(w[at] / scale);
  }
  if (threadIdx.x == 0) {
    scales[blockIdx.y * scale_stride + blockIdx.x] = scale;
    if (blockIdx.x == gridDim.x - 1) {
      for (int64_t pad = int64_t(gridDim.x); pad < scale_stride; pad++) scales[blockIdx.y * scale_stride + pad] = 1.0f;
    }
  }
}

__global__ void widen_kernel(const uint8_t* bytes, const float* scales, int64_t scale_stride, int64_t rows, int64_t cols,
                             uint16_t* out) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    out[i] = f32_to_bf16(fp8e4m3_to_f32(bytes[i]) * scales[(r / kBlock) * scale_stride + c / kBlock]);
  }
}

}  // namespace

void quantize_fp8_blockwise(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales, int64_t scale_stride,
                            cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  const Shapes shapes{{"rows", rows}, {"cols", cols}, {"scale_stride", scale_stride}};
  if (scale_stride < col_blocks || row_blocks > 65535 || col_blocks > INT32_MAX) {
    throw CudaError(describe("quantize_fp8_blockwise", shapes) + ": the scale stride must cover every column block");
  }
  quantize_kernel<<<dim3(unsigned(col_blocks), unsigned(row_blocks)), kThreads, 0, stream>>>(w, rows, cols, bytes, scales, scale_stride);
  check_launch("quantize_fp8_blockwise", shapes);
}

void widen_fp8_blockwise_to_bf16(const uint8_t* bytes, const float* scales, int64_t scale_stride, int64_t rows, int64_t cols,
                                 uint16_t* out, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  const unsigned blocks = unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
  widen_kernel<<<blocks, kThreads, 0, stream>>>(bytes, scales, scale_stride, rows, cols, out);
  check_launch("widen_fp8_blockwise_to_bf16", {{"rows", rows}, {"cols", cols}});
}

}  // namespace s3::cuda
