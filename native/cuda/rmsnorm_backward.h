// rmsnorm_backward.h: the CUDA twin of cpu/rmsnorm_backward.h (also the per-head q/k norms, with
// N = T·heads and C = head_dim), with core/ops/rmsnorm.h's arithmetic. Deterministic without
// atomics: per-row sums are one warp's fixed butterfly; dweight's column sums run over fixed chunks
// of kRmsnormBackwardChunkRows rows in row order, then over the chunks in order. The sums' order
// differs from the CPU's (sequential), so the two agree to double rounding of the sums, then f32
// rounding. Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace s3::cuda {

constexpr int64_t kRmsnormBackwardChunkRows = 256;

// Device scratch rmsnorm_backward needs for N rows of C values (8-byte aligned).
size_t rmsnorm_backward_scratch_bytes(int64_t N, int64_t C);

// dinp [N × C] overwritten (may equal dout); dweight [C] accumulated (+=); dout, inp [N × C];
// weight [C]; scratch: rmsnorm_backward_scratch_bytes(N, C) bytes.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, int64_t N,
                      int64_t C, float eps, void* scratch, cudaStream_t stream);

}  // namespace s3::cuda
