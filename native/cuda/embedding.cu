// Embedding lookup on the device; see embedding.h.
#include "core/dtype.h"
#include "cuda/check.h"
#include "cuda/embedding.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

template <typename E>
__global__ void embedding_kernel(float* x, const int32_t* tokens, const E* table, int64_t T, int64_t C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * C) return;
  const int64_t t = i / C, c = i % C;
  const E value = table[int64_t(tokens[t]) * C + c];
  if constexpr (sizeof(E) == 2) {
    x[i] = bf16_to_f32(value);
  } else {
    x[i] = value;
  }
}

__global__ void gather_kernel(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < R * C) out[i] = in[int64_t(rows[i / C]) * C + i % C];
}

__global__ void scatter_kernel(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < R * C) out[int64_t(rows[i / C]) * C + i % C] = in[i];
}

}  // namespace

void scatter_rows(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C, cudaStream_t stream) {
  if (R == 0) return;
  scatter_kernel<<<blocks_for(R * C, 256), 256, 0, stream>>>(out, in, rows, R, C);
  check_launch("scatter_rows", {{"R", R}, {"C", C}});
}

void gather_rows(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C, cudaStream_t stream) {
  if (R == 0) return;
  gather_kernel<<<blocks_for(R * C, 256), 256, 0, stream>>>(out, in, rows, R, C);
  check_launch("gather_rows", {{"R", R}, {"C", C}});
}

void embedding_forward(float* x, const int32_t* tokens, const void* table, DType dtype, int64_t T, int64_t C, cudaStream_t stream) {
  if (T == 0) return;
  const unsigned grid = blocks_for(T * C, 256);
  if (dtype == DType::BF16) {
    embedding_kernel<uint16_t><<<grid, 256, 0, stream>>>(x, tokens, static_cast<const uint16_t*>(table), T, C);
  } else if (dtype == DType::F32) {
    embedding_kernel<float><<<grid, 256, 0, stream>>>(x, tokens, static_cast<const float*>(table), T, C);
  } else {
    throw CudaError(std::string("embedding_forward: the device table must be F32 or BF16, not ") + dtype_name(dtype));
  }
  check_launch("embedding_forward", {{"T", T}, {"C", C}});
}

}  // namespace s3::cuda
