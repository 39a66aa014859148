// embedding.h: the CUDA twin of cpu/embedding.h: token rows of an f32 or bf16 table widened to f32
// (exact); and the gather and scatter of chosen f32 rows. Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace s3::cuda {

// x: [T × C] f32; tokens: [T] ids below the table's rows (checked by the caller); table: [V × C]
// of `dtype` (DType::F32 or DType::BF16).
void embedding_forward(float* x, const int32_t* tokens, const void* table, DType dtype, int64_t T, int64_t C, cudaStream_t stream);

// out[r] = in[rows[r]] for rows of C f32 values: the rows whose logits a step needs.
void gather_rows(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C, cudaStream_t stream);

// out[rows[r]] = in[r] for R distinct rows of C f32 values: the loss's row gradients back in place.
void scatter_rows(float* out, const float* in, const int32_t* rows, int64_t R, int64_t C, cudaStream_t stream);

}  // namespace s3::cuda
