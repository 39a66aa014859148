// matrix_view.h: a read-only typed view of a 2-D weight matrix exactly as a checkpoint stores it
// (often straight inside a memory-mapped safetensors file), so the kernels convert elements to
// f32 as they stream them instead of anyone holding an f32 copy of the model.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace s3::cpu {

// FP8 blockwise checkpoints carry one f32 scale per 128 × 128 block of each linear weight.
constexpr int64_t kFp8BlockSize = 128;

struct MatrixView {
  const void* data = nullptr;  // [rows × cols] row-major, elements of `dtype`, aligned to the element size
  DType dtype = DType::F32;    // F32, BF16, F16 or F8_E4M3
  int64_t rows = 0;            // N: output features of a linear layer, vocabulary rows of an embedding
  int64_t cols = 0;            // K: input features
  // F8_E4M3 only: [ceil(rows/128) × ceil(cols/128)] row-major; element (n, k) is
  // fp8(n, k) × block_scales[(n/128) × ceil(cols/128) + k/128] (the checkpoint's weight_scale_inv).
  const float* block_scales = nullptr;
  // BF16 only, optional: the same weights packed once per weight version for the avx512bf16
  // level's panel kernel (cpu/weight_panels.h), which every matmul on this view then uses at that
  // level, whatever M; other levels read `data` (and `block_scales`).
  const uint32_t* bf16_panels = nullptr;
  // F8_E4M3 only, optional: the same, each place one pair of codes (the even k in the low byte)
  // instead of one pair of BF16 values; the panel kernel widens them a 128-wide block of k at a time.
  const uint16_t* fp8_panels = nullptr;

  int64_t scale_cols() const { return (cols + kFp8BlockSize - 1) / kFp8BlockSize; }
};

// The exact f32 value of element (n, k): the conversion every kernel must reproduce.
inline float matrix_element(const MatrixView& w, int64_t n, int64_t k) {
  const int64_t index = n * w.cols + k;
  switch (w.dtype) {
    case DType::BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(w.data)[index]);
    case DType::F16:
      return f16_to_f32(static_cast<const uint16_t*>(w.data)[index]);
    case DType::F8_E4M3:
      return fp8e4m3_to_f32(static_cast<const uint8_t*>(w.data)[index]) *
             w.block_scales[(n / kFp8BlockSize) * w.scale_cols() + k / kFp8BlockSize];
    default:
      return static_cast<const float*>(w.data)[index];
  }
}

// Row n as f32 (cols values): embedding lookups and the scalar kernels use it.
void matrix_row_to_f32(const MatrixView& w, int64_t n, float* out);

}  // namespace s3::cpu
