// SwiGLU and the residual add on the device; see swiglu.h.
#include "core/ops/swiglu.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/swiglu.h"

namespace s3::cuda {
namespace {

__global__ void swiglu_kernel(float* out, const float* gate, const float* up, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) out[i] = ops::silu_mul(gate[i], up[i]);
}

__global__ void residual_kernel(float* x, const float* delta, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) x[i] = add_rn(x[i], delta[i]);
}

}  // namespace

void swiglu_forward(float* out, const float* gate, const float* up, int64_t N, cudaStream_t stream) {
  if (N == 0) return;
  swiglu_kernel<<<blocks_for(N, 256), 256, 0, stream>>>(out, gate, up, N);
  check_launch("swiglu_forward", {{"N", N}});
}

void residual_forward(float* x, const float* delta, int64_t N, cudaStream_t stream) {
  if (N == 0) return;
  residual_kernel<<<blocks_for(N, 256), 256, 0, stream>>>(x, delta, N);
  check_launch("residual_forward", {{"N", N}});
}

}  // namespace s3::cuda
