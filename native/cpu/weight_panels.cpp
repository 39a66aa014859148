// Packing BF16 and FP8 weights into the panel layout of weight_panels.h (the scalar loop, or the
// AVX-512 one of weight_panels_avx512bf16.cpp), and whether this CPU uses it.
#include "cpu/weight_panels.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/cpu_features.h"
#include "cpu/matmul.h"

namespace s3::cpu {

namespace {

int64_t panel_pairs(int64_t cols) { return (cols + kMatmulRowAlign - 1) / kMatmulRowAlign * kMatmulRowAlign / 2; }

// Panel c of W [rows × cols] (elements of type T: BF16 values or FP8 codes) into `panels`, `pairs`
// pairs of k, each place the pair (even, odd) in one Place.
template <typename Place, typename T>
void pack_panel(const T* values, int64_t rows, int64_t cols, int64_t pairs, int64_t c, Place* panels) {
  constexpr int kBits = 8 * int(sizeof(T));
  Place* panel = panels + c * pairs * kWeightPanelColumns;
  for (int64_t j = 0; j < kWeightPanelColumns; j++) {
    const int64_t n = c * kWeightPanelColumns + j;
    const T* row = values + n * cols;
    for (int64_t q = 0; q < pairs; q++) {
      const int64_t k = 2 * q;
      const Place even = n < rows && k < cols ? row[k] : 0, odd = n < rows && k + 1 < cols ? row[k + 1] : 0;
      panel[q * kWeightPanelColumns + j] = Place(even | Place(odd << kBits));
    }
  }
}

template <typename Place, typename T>
void pack_panels(const MatrixView& w, Place* panels, ThreadPool& pool, SimdLevel level) {
  const int64_t pairs = panel_pairs(w.cols), panel_count = (w.rows + kWeightPanelColumns - 1) / kWeightPanelColumns;
  const T* values = static_cast<const T*>(w.data);
  const bool vectors = level >= SimdLevel::Avx512Bf16;
  pool.parallel_for(size_t(panel_count), [&](size_t begin, size_t end, size_t) {
    for (int64_t c = int64_t(begin); c < int64_t(end); c++) {
      if (vectors) {
        pack_weight_panel_avx512bf16(w, pairs, c, panels);
      } else {
        pack_panel(values, w.rows, w.cols, pairs, c, panels);
      }
    }
  });
}

}  // namespace

int64_t weight_panel_places(int64_t rows, int64_t cols) {
  return (rows + kWeightPanelColumns - 1) / kWeightPanelColumns * panel_pairs(cols) * kWeightPanelColumns;
}

int64_t weight_panel_bytes(const MatrixView& w) {
  switch (w.dtype) {
    case DType::BF16: return weight_panel_places(w.rows, w.cols) * int64_t(sizeof(uint32_t));
    case DType::F8_E4M3: return weight_panel_places(w.rows, w.cols) * int64_t(sizeof(uint16_t));
    default: return 0;
  }
}

void pack_weight_panels(const MatrixView& w, void* panels, ThreadPool& pool, SimdLevel level) {
  if (level >= SimdLevel::Avx512Bf16 && cpu_info().supported_level < SimdLevel::Avx512Bf16) {
    throw std::invalid_argument("pack_weight_panels: this CPU cannot run the avx512bf16 level");
  }
  switch (w.dtype) {
    case DType::BF16: return pack_panels<uint32_t, uint16_t>(w, static_cast<uint32_t*>(panels), pool, level);
    case DType::F8_E4M3:
      if (w.block_scales == nullptr) throw std::invalid_argument("pack_weight_panels: FP8 weights need their block scales");
      return pack_panels<uint16_t, uint8_t>(w, static_cast<uint16_t*>(panels), pool, level);
    default: throw std::invalid_argument("pack_weight_panels: weights must be BF16 or F8_E4M3");
  }
}

void pack_weight_panels(const MatrixView& w, void* panels, ThreadPool& pool) {
  pack_weight_panels(w, panels, pool, cpu_info().level);
}

void attach_weight_panels(MatrixView& w, const void* panels) {
  switch (w.dtype) {
    case DType::BF16: w.bf16_panels = static_cast<const uint32_t*>(panels); return;
    case DType::F8_E4M3: w.fp8_panels = static_cast<const uint16_t*>(panels); return;
    default: throw std::invalid_argument("attach_weight_panels: weights must be BF16 or F8_E4M3");
  }
}

bool weight_panels_used() {
  const char* setting = std::getenv("S3_WEIGHT_PANELS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  return matmul_kernels().reads_weight_panels;
}

}  // namespace s3::cpu
