// SwiGLU backward on the device; see swiglu_backward.h.
#include "core/ops/swiglu.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/swiglu_backward.h"

namespace s3::cuda {
namespace {

__global__ void swiglu_backward_kernel(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                                       int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  float dg, du;
  ops::silu_mul_backward(gate[i], up[i], dout[i], dg, du);
  dgate[i] = dg;
  dup[i] = du;
}

}  // namespace

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N,
                     cudaStream_t stream) {
  if (N == 0) return;
  swiglu_backward_kernel<<<blocks_for(N, 256), 256, 0, stream>>>(dgate, dup, dout, gate, up, N);
  check_launch("swiglu_backward", {{"N", N}});
}

}  // namespace s3::cuda
