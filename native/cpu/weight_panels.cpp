// Packing BF16 weights into the panel layout of weight_panels.h, and whether this CPU uses it.
#include "cpu/weight_panels.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/cpu_features.h"
#include "cpu/matmul.h"

namespace s3::cpu {

namespace {

int64_t panel_pairs(int64_t cols) { return (cols + kMatmulRowAlign - 1) / kMatmulRowAlign * kMatmulRowAlign / 2; }

// Panel c of W [rows × cols] (BF16 values) into `panels`, `pairs` pairs of k.
void pack_panel(const uint16_t* values, int64_t rows, int64_t cols, int64_t pairs, int64_t c, uint32_t* panels) {
  uint32_t* panel = panels + c * pairs * kWeightPanelColumns;
  for (int64_t j = 0; j < kWeightPanelColumns; j++) {
    const int64_t n = c * kWeightPanelColumns + j;
    const uint16_t* row = values + n * cols;
    for (int64_t q = 0; q < pairs; q++) {
      const int64_t k = 2 * q;
      const uint32_t even = n < rows && k < cols ? row[k] : 0, odd = n < rows && k + 1 < cols ? row[k + 1] : 0;
      panel[q * kWeightPanelColumns + j] = even | (odd << 16);
    }
  }
}

}  // namespace

int64_t weight_panel_dwords(int64_t rows, int64_t cols) {
  return (rows + kWeightPanelColumns - 1) / kWeightPanelColumns * panel_pairs(cols) * kWeightPanelColumns;
}

void pack_weight_panels(const MatrixView& w, uint32_t* panels, ThreadPool& pool) {
  if (w.dtype != DType::BF16) throw std::invalid_argument("pack_weight_panels: weights must be BF16");
  const int64_t pairs = panel_pairs(w.cols), panel_count = (w.rows + kWeightPanelColumns - 1) / kWeightPanelColumns;
  const uint16_t* values = static_cast<const uint16_t*>(w.data);
  pool.parallel_for(size_t(panel_count), [&](size_t begin, size_t end, size_t) {
    for (int64_t c = int64_t(begin); c < int64_t(end); c++) pack_panel(values, w.rows, w.cols, pairs, c, panels);
  });
}

bool weight_panels_used() {
  const char* setting = std::getenv("S3_WEIGHT_PANELS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  return matmul_kernels().reads_weight_panels;
}

}  // namespace s3::cpu
