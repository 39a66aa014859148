// RMSNorm on the device; see rmsnorm.h.
#include "core/ops/rmsnorm.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/rmsnorm.h"

namespace s3::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void rmsnorm_kernel(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= N) return;
  const float* x = inp + row * C;
  double sum_squares = 0.0;
  for (int64_t c = lane; c < C; c += 32) sum_squares += double(x[c]) * double(x[c]);
  sum_squares = warp_sum(sum_squares);
  const float inv_rms = ops::rmsnorm_inv_rms(sum_squares, C, eps);
  float* y = out + row * C;
  for (int64_t c = lane; c < C; c += 32) y[c] = ops::rmsnorm_apply(x[c], inv_rms, weight[c]);
}

}  // namespace

void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps, cudaStream_t stream) {
  if (N == 0) return;
  rmsnorm_kernel<<<blocks_for(N, kWarpsPerBlock), 32 * kWarpsPerBlock, 0, stream>>>(out, inp, weight, N, C, eps);
  check_launch("rmsnorm_forward", {{"N", N}, {"C", C}});
}

}  // namespace s3::cuda
