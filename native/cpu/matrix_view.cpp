// Row conversion for MatrixView; see matrix_view.h.
#include "cpu/matrix_view.h"

#include "cpu/convert.h"

namespace s3::cpu {

void matrix_row_to_f32(const MatrixView& w, int64_t n, float* out) {
  const size_t count = size_t(w.cols);
  const size_t first = size_t(n) * count;
  switch (w.dtype) {
    case DType::BF16:
      convert_kernels().bf16_to_f32(static_cast<const uint16_t*>(w.data) + first, out, count);
      return;
    case DType::F16:
      convert_f16_to_f32(static_cast<const uint16_t*>(w.data) + first, out, count);
      return;
    case DType::F8_E4M3: {
      convert_kernels().fp8e4m3_to_f32(static_cast<const uint8_t*>(w.data) + first, out, count);
      const float* scales = w.block_scales + (n / kFp8BlockSize) * w.scale_cols();
      for (int64_t k = 0; k < w.cols; k++) out[k] *= scales[k / kFp8BlockSize];
      return;
    }
    default:
      for (size_t k = 0; k < count; k++) out[k] = static_cast<const float*>(w.data)[first + k];
      return;
  }
}

}  // namespace s3::cpu
