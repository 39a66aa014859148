// Packing BF16 and FP8 weights into the panel layout of weight_panels.h with AVX-512 (compiled with
// the avx512bf16 level's flags, called only where that level runs, the one that reads panels): each
// block of 16 weight rows × 16 pairs of k is loaded a row per register, transposed in registers
// (transpose16_avx512.h) and stored a pair per register, the same places as the scalar packing in
// weight_panels.cpp (C++ tests compare both with the layout).
#include <immintrin.h>

#include "cpu/transpose16_avx512.h"
#include "cpu/weight_panels.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kBlock = 16;  // rows and pairs per transposed block

// The low `count` of 32 lanes (none below 1, all from 32 on).
inline __mmask32 first_lanes(int64_t count) {
  return count <= 0 ? __mmask32(0) : count >= 32 ? ~__mmask32(0) : __mmask32((1u << count) - 1u);
}

// Rows [n0, n0 + 16) × pairs [q0, q0 + 16) of W, a row's 16 places per register (zero past the rows
// and past cols): BF16 values as dwords; FP8 codes as 16-bit places widened to dwords.
template <typename T>
__m512i load_places(const T* row, int64_t k, int64_t cols);
template <>
__m512i load_places<uint16_t>(const uint16_t* row, int64_t k, int64_t cols) {
  return _mm512_maskz_loadu_epi16(first_lanes(cols - k), row + k);
}
template <>
__m512i load_places<uint8_t>(const uint8_t* row, int64_t k, int64_t cols) {
  return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi8(first_lanes(cols - k), row + k));
}

inline void store_places(uint32_t* to, __m512i places) { _mm512_storeu_si512(to, places); }
inline void store_places(uint16_t* to, __m512i places) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), _mm512_cvtepi32_epi16(places));
}

template <typename Place, typename T>
void pack_panel(const T* values, int64_t rows, int64_t cols, int64_t pairs, int64_t c, Place* panels) {
  Place* panel = panels + c * pairs * kWeightPanelColumns;
  for (int64_t j0 = 0; j0 < kWeightPanelColumns; j0 += kBlock) {
    const int64_t n0 = c * kWeightPanelColumns + j0, valid_rows = smaller(kBlock, rows - n0);
    for (int64_t q0 = 0; q0 < pairs; q0 += kBlock) {
      __m512 r[kBlock];
      for (int i = 0; i < kBlock; i++) {
        r[i] = i < valid_rows ? _mm512_castsi512_ps(load_places(values + (n0 + i) * cols, 2 * q0, cols))
                              : _mm512_setzero_ps();
      }
      transpose16x16(r);
      for (int t = 0; t < kBlock; t++) store_places(panel + (q0 + t) * kWeightPanelColumns + j0, _mm512_castps_si512(r[t]));
    }
  }
}

}  // namespace

void pack_weight_panel_avx512bf16(const MatrixView& w, int64_t pairs, int64_t c, void* panels) {
  if (w.dtype == DType::BF16) {
    pack_panel(static_cast<const uint16_t*>(w.data), w.rows, w.cols, pairs, c, static_cast<uint32_t*>(panels));
  } else {
    pack_panel(static_cast<const uint8_t*>(w.data), w.rows, w.cols, pairs, c, static_cast<uint16_t*>(panels));
  }
}

}  // namespace s3::cpu
