// Philox uniform generation on the device; see philox_kernels.h.
#include "core/philox.h"
#include "cuda/philox_kernels.h"

namespace s3::cuda {
namespace {

__global__ void philox_uniform_kernel(uint64_t seed, uint64_t first_token_index, uint32_t draw_index,
                                      uint32_t stream_id, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    out[i] = s3::philox_uniform(seed, first_token_index + i, draw_index, stream_id);
  }
}

}  // namespace

void philox_uniforms(uint64_t seed, uint64_t first_token_index, uint32_t draw_index, uint32_t stream_id, float* out,
                     size_t n, cudaStream_t stream) {
  const size_t blocks = (n + 255) / 256;
  const unsigned grid = unsigned(blocks == 0 ? 1 : (blocks < 65535 ? blocks : 65535));
  philox_uniform_kernel<<<grid, 256, 0, stream>>>(seed, first_token_index, draw_index, stream_id, out, n);
}

}  // namespace s3::cuda
