// Quantizing weights to FP8 with 128 × 128 block scales; see fp8_quantize.h.
#include "model/fp8_quantize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/weight_rebuild.h"

namespace s3::model {
namespace {

// Quantizes w (any stored dtype, widened exactly to f32 first) into `name` and `name`_scale_inv.
void add_quantized(std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w) {
  std::vector<float> rows(size_t(w.rows * w.cols));
  for (int64_t n = 0; n < w.rows; n++) cpu::matrix_row_to_f32(w, n, &rows[size_t(n * w.cols)]);
  const int64_t scale_rows = (w.rows + cpu::kFp8BlockSize - 1) / cpu::kFp8BlockSize;
  RebuiltTensor bytes{name, DType::F8_E4M3, {w.rows, w.cols}, std::vector<uint8_t>(size_t(w.rows * w.cols))};
  RebuiltTensor scales{name + "_scale_inv", DType::F32, {scale_rows, w.scale_cols()},
                       std::vector<uint8_t>(size_t(scale_rows * w.scale_cols() * 4))};
  quantize_fp8_blockwise(rows.data(), w.rows, w.cols, bytes.bytes.data(), reinterpret_cast<float*>(scales.bytes.data()));
  out.push_back(std::move(bytes));
  out.push_back(std::move(scales));
}

}  // namespace

void quantize_fp8_blockwise(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales) {
  const int64_t B = cpu::kFp8BlockSize, scale_cols = (cols + B - 1) / B;
  for (int64_t rb = 0; rb * B < rows; rb++) {
    for (int64_t cb = 0; cb * B < cols; cb++) {
      const int64_t r_end = std::min(rows, (rb + 1) * B), c_end = std::min(cols, (cb + 1) * B);
      float max_abs = 0.0f;
      for (int64_t r = rb * B; r < r_end; r++) {
        for (int64_t c = cb * B; c < c_end; c++) max_abs = std::max(max_abs, std::fabs(w[r * cols + c]));
      }
      const float scale = max_abs > 0.0f ? max_abs / kFp8E4M3Max : 1.0f;
      scales[rb * scale_cols + cb] = scale;
      for (int64_t r = rb * B; r < r_end; r++) {
        for (int64_t c = cb * B; c < c_end; c++) bytes[r * cols + c] = f32_to_fp8e4m3(w[r * cols + c] / scale);
      }
    }
  }
}

Qwen3Weights quantize_weights_fp8(const Qwen3Weights& weights) {
  WeightRebuild rebuild;
  rebuild.matrix = [](std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w, MatrixRole role) {
    if (role == MatrixRole::Linear && w.dtype != DType::F8_E4M3) {
      add_quantized(out, name, w);
    } else {
      add_stored_matrix(out, name, w);
    }
  };
  rebuild.fp8_blockwise = true;
  rebuild.source = "the FP8-quantized weights";
  return rebuild_weights(weights, rebuild);
}

}  // namespace s3::model
