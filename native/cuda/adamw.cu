// AdamW on the device; see adamw.h.
#include <cmath>

#include "core/philox.h"
#include "cuda/adamw.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kNormBlocks = 1024;  // the fixed grid of the norm's first pass (also its partials' count)

__global__ void square_sum_partial_kernel(double* partial, const float* grads, size_t n) {
  __shared__ double scratch[32];
  double sum = 0.0;
  const size_t stride = size_t(gridDim.x) * kThreads;
  for (size_t i = size_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    sum = dadd_rn(sum, dmul_rn(double(grads[i]), double(grads[i])));
  }
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// One block of kNormBlocks threads: the partials summed in a fixed tree.
__global__ void square_sum_finish_kernel(double* total, const double* partial) {
  __shared__ double scratch[32];
  const double sum = block_sum(partial[threadIdx.x], scratch);
  if (threadIdx.x == 0) *total = sum;
}

__global__ void adamw_kernel(float* params, const float* grads, float* m, float* v, size_t n, ops::AdamWCoefficients k) {
  const size_t i = size_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) ops::adamw_update(k, grads[i], m[i], v[i], params[i]);
}

// A thread per Philox block of 4 parameters.
__global__ void adamw_bf16_kernel(float* params, const float* grads, uint16_t* m, uint16_t* v, size_t n,
                                  ops::AdamWCoefficients k, uint64_t seed, uint32_t step) {
  const size_t block = size_t(blockIdx.x) * kThreads + threadIdx.x;
  if (block * 4 >= n) return;
  const Philox4x32 random = philox_block(seed, block, step, ops::kAdamWRoundingStream);
  for (size_t j = 0; j < 4 && block * 4 + j < n; j++) {
    const size_t i = block * 4 + j;
    ops::adamw_update_bf16(k, grads[i], m[i], v[i], params[i], random.word[j]);
  }
}

}  // namespace

size_t gradient_norm_scratch_bytes() { return sizeof(double) * size_t(kNormBlocks + 1); }

double gradient_norm(const float* grads, size_t n, void* scratch, cudaStream_t stream) {
  double* partial = static_cast<double*>(scratch);
  double* total = partial + kNormBlocks;
  // Always the full grid (blocks past n contribute 0), so the tree never depends on anything but n.
  square_sum_partial_kernel<<<unsigned(kNormBlocks), kThreads, 0, stream>>>(partial, grads, n);
  check_launch("gradient_norm", {{"n", int64_t(n)}});
  square_sum_finish_kernel<<<1, unsigned(kNormBlocks), 0, stream>>>(total, partial);
  check_launch("gradient_norm (finish)", {{"n", int64_t(n)}});
  double host = 0.0;
  check(cudaMemcpyAsync(&host, total, sizeof(double), cudaMemcpyDeviceToHost, stream), "gradient_norm (copy)");
  check(cudaStreamSynchronize(stream), "gradient_norm", {{"n", int64_t(n)}});
  return std::sqrt(host);
}

void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const ops::AdamWCoefficients& k,
                  cudaStream_t stream) {
  if (n == 0) return;
  adamw_kernel<<<blocks_for(int64_t(n), kThreads), kThreads, 0, stream>>>(params, grads, m, v, n, k);
  check_launch("adamw_update", {{"n", int64_t(n)}});
}

void adamw_update_bf16(float* params, const float* grads, uint16_t* m, uint16_t* v, size_t n,
                       const ops::AdamWCoefficients& k, uint64_t seed, uint32_t step, cudaStream_t stream) {
  if (n == 0) return;
  const int64_t blocks = int64_t((n + 3) / 4);
  adamw_bf16_kernel<<<blocks_for(blocks, kThreads), kThreads, 0, stream>>>(params, grads, m, v, n, k, seed, step);
  check_launch("adamw_update_bf16", {{"n", int64_t(n)}});
}

}  // namespace s3::cuda
