// Philox uniforms generated on a CUDA device with the keying of core/philox.h, so the GPU sampler
// draws exactly the numbers the CPU sampler draws. Pointers are device memory.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace s3::cuda {

// out[i] = philox_uniform(seed, first_token_index + i, draw_index, stream_id) for i < n.
void philox_uniforms(uint64_t seed, uint64_t first_token_index, uint32_t draw_index, uint32_t stream_id, float* out,
                     size_t n, cudaStream_t stream);

}  // namespace s3::cuda
