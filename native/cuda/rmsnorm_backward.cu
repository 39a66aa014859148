// RMSNorm backward on the device; see rmsnorm_backward.h. Four launches: per-row r and the
// coefficient of x (a warp per row), dweight's partial sums per chunk of rows, their sum over the
// chunks into dweight, then dx (last, so dinp may overwrite dout).
#include "core/ops/rmsnorm.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/rmsnorm_backward.h"

namespace s3::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kColumnThreads = 128;

int64_t chunks_for(int64_t N) { return (N + kRmsnormBackwardChunkRows - 1) / kRmsnormBackwardChunkRows; }

// rstd[row] and coef[row] = r³·Σ(w·dy·x)/C.
__global__ void row_stats_kernel(double* rstd, double* coef, const float* dout, const float* inp, const float* weight,
                                 int64_t N, int64_t C, float eps) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= N) return;
  const float* x = inp + row * C;
  const float* dy = dout + row * C;
  double sum_squares = 0.0, dot = 0.0;
  for (int64_t c = lane; c < C; c += 32) {
    sum_squares = dadd_rn(sum_squares, dmul_rn(double(x[c]), double(x[c])));
    dot = dadd_rn(dot, ops::rmsnorm_backward_dot_term(weight[c], dy[c], x[c]));
  }
  sum_squares = warp_sum(sum_squares);
  dot = warp_sum(dot);
  if (lane == 0) {
    const double r = ops::rmsnorm_backward_rstd(sum_squares, C, eps);
    rstd[row] = r;
    coef[row] = ops::rmsnorm_backward_coef(r, dot, C);
  }
}

// partial[chunk × C + c] = Σ over the chunk's rows, in order, of dy·x·r.
__global__ void dweight_partial_kernel(double* partial, const double* rstd, const float* dout, const float* inp, int64_t N,
                                       int64_t C) {
  const int64_t c = int64_t(blockIdx.x) * kColumnThreads + threadIdx.x;
  if (c >= C) return;
  for (int64_t chunk = blockIdx.y; chunk * kRmsnormBackwardChunkRows < N; chunk += gridDim.y) {
    const int64_t begin = chunk * kRmsnormBackwardChunkRows;
    const int64_t end = begin + kRmsnormBackwardChunkRows < N ? begin + kRmsnormBackwardChunkRows : N;
    double sum = 0.0;
    for (int64_t row = begin; row < end; row++) {
      sum = dadd_rn(sum, ops::rmsnorm_backward_dweight_term(dout[row * C + c], inp[row * C + c], rstd[row]));
    }
    partial[chunk * C + c] = sum;
  }
}

__global__ void dweight_finish_kernel(float* dweight, const double* partial, int64_t chunks, int64_t C) {
  const int64_t c = int64_t(blockIdx.x) * kColumnThreads + threadIdx.x;
  if (c >= C) return;
  double sum = 0.0;
  for (int64_t chunk = 0; chunk < chunks; chunk++) sum = dadd_rn(sum, partial[chunk * C + c]);
  dweight[c] = add_rn(dweight[c], float(sum));
}

__global__ void dx_kernel(float* dinp, const double* rstd, const double* coef, const float* dout, const float* inp,
                          const float* weight, int64_t N, int64_t C) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= N) return;
  const double r = rstd[row], k = coef[row];
  for (int64_t c = lane; c < C; c += 32) {
    dinp[row * C + c] = ops::rmsnorm_backward_dx(r, k, weight[c], dout[row * C + c], inp[row * C + c]);
  }
}

}  // namespace

size_t rmsnorm_backward_scratch_bytes(int64_t N, int64_t C) {
  return sizeof(double) * size_t(2 * N + chunks_for(N) * C);
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps, void* scratch, cudaStream_t stream) {
  if (N == 0 || C == 0) return;
  double* rstd = static_cast<double*>(scratch);
  double* coef = rstd + N;
  double* partial = coef + N;
  const int64_t chunks = chunks_for(N);
  const Shapes shapes{{"N", N}, {"C", C}};
  row_stats_kernel<<<blocks_for(N, kWarpsPerBlock), 32 * kWarpsPerBlock, 0, stream>>>(rstd, coef, dout, inp, weight, N, C, eps);
  check_launch("rmsnorm_backward (row sums)", shapes);
  const dim3 partial_grid(blocks_for(C, kColumnThreads), unsigned(chunks < 65535 ? chunks : 65535));
  dweight_partial_kernel<<<partial_grid, kColumnThreads, 0, stream>>>(partial, rstd, dout, inp, N, C);
  check_launch("rmsnorm_backward (dweight chunks)", shapes);
  dweight_finish_kernel<<<blocks_for(C, kColumnThreads), kColumnThreads, 0, stream>>>(dweight, partial, chunks, C);
  check_launch("rmsnorm_backward (dweight)", shapes);
  dx_kernel<<<blocks_for(N, kWarpsPerBlock), 32 * kWarpsPerBlock, 0, stream>>>(dinp, rstd, coef, dout, inp, weight, N, C);
  check_launch("rmsnorm_backward (dx)", shapes);
}

}  // namespace s3::cuda
