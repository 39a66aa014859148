// Rotary embedding backward on the device; see rope_backward.h.
#include "core/ops/rope.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/rope_backward.h"

namespace s3::cuda {
namespace {

__global__ void rope_backward_kernel(float* dx, const int32_t* positions, const float* cos, const float* sin, int64_t T,
                                     int64_t NH, int64_t HD) {
  const int64_t half = HD / 2;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // over T × NH × half pairs
  if (i >= T * NH * half) return;
  const int64_t j = i % half, head = i / half, t = head / NH;
  float* h = dx + head * HD;
  const int64_t table = int64_t(positions[t]) * half + j;
  ops::rope_rotate_transpose(h[j], h[j + half], cos[table], sin[table]);
}

}  // namespace

void rope_backward(float* dx, const int32_t* positions, const float* cos, const float* sin, int64_t T, int64_t NH,
                   int64_t HD, cudaStream_t stream) {
  const int64_t pairs = T * NH * (HD / 2);
  if (pairs == 0) return;
  rope_backward_kernel<<<blocks_for(pairs, 256), 256, 0, stream>>>(dx, positions, cos, sin, T, NH, HD);
  check_launch("rope_backward", {{"T", T}, {"NH", NH}, {"HD", HD}});
}

}  // namespace s3::cuda
