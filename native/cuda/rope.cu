// Rotary embedding on the device; see rope.h.
#include "core/ops/rope.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/rope.h"

namespace s3::cuda {
namespace {

__global__ void rope_kernel(float* x, const int32_t* positions, const float* cos, const float* sin, int64_t T, int64_t NH,
                            int64_t HD) {
  const int64_t half = HD / 2;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // over T × NH × half pairs
  if (i >= T * NH * half) return;
  const int64_t j = i % half, head = i / half, t = head / NH;
  float* h = x + head * HD;
  const int64_t table = int64_t(positions[t]) * half + j;
  ops::rope_rotate(h[j], h[j + half], cos[table], sin[table]);
}

}  // namespace

void rope_forward(float* x, const int32_t* positions, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD,
                  cudaStream_t stream) {
  const int64_t pairs = T * NH * (HD / 2);
  if (pairs == 0) return;
  rope_kernel<<<blocks_for(pairs, 256), 256, 0, stream>>>(x, positions, cos, sin, T, NH, HD);
  check_launch("rope_forward", {{"T", T}, {"NH", NH}, {"HD", HD}});
}

}  // namespace s3::cuda
