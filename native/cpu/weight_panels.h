// weight_panels.h: BF16 and FP8 weights packed once per weight version into the layout of the
// avx512bf16 level's panel kernel (matmul_panels_avx512bf16.cpp), where each output is one chain over
// the pairs of k and a vector holds 16 output columns: no lane tree per output, and each weight value
// is loaded once per register tile of 6 input rows rather than once per 4. The layout: 64-column
// panels, panel c holding, for each pair q of k (K padded to kMatmulRowAlign), the 64 places
// (W[64c + j][2q], W[64c + j][2q + 1]), the even k in the low half, zero past the rows and past K;
// panel c starts at c × pairs × 64 places. A BF16 place is a dword of two BF16 values
// (MatrixView::bf16_panels), an FP8 place 16 bits of two e4m3 codes (MatrixView::fp8_panels, its
// block scales read from MatrixView::block_scales: a 64-column panel lies in one 128-row block). A
// linear layer's view points at its panels (model/qwen3_weights.cpp packs a model's the first time
// the CPU forward runs on it: Qwen3Weights::cpu_layers).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

constexpr int64_t kWeightPanelColumns = 64;

// Places (pairs of k × columns, padding included) the panels of a [rows × cols] weight hold.
int64_t weight_panel_places(int64_t rows, int64_t cols);
// Bytes the panels of w take: a dword per place for BF16, 16 bits for FP8 (a multiple of 128, so
// panels of several weights laid one after another stay aligned); 0 for other dtypes.
int64_t weight_panel_bytes(const MatrixView& w);

// W (BF16 or F8_E4M3) packed into `panels` (weight_panel_bytes(w) bytes), the panels split between
// the pool's threads (a move of values: any split gives the same panels), with AVX-512 where
// `level` (default: cpu_info().level) is avx512bf16 or above, else a scalar loop: the same panels.
void pack_weight_panels(const MatrixView& w, void* panels, ThreadPool& pool, SimdLevel level);
void pack_weight_panels(const MatrixView& w, void* panels, ThreadPool& pool);
// Points w at panels packed from it: bf16_panels or fp8_panels by its dtype.
void attach_weight_panels(MatrixView& w, const void* panels);

// Whether the matmul kernels of this CPU (cpu_info().level, capped by S3_SIMD) read panels, and
// S3_WEIGHT_PANELS is not 0: only the avx512bf16 level has panel kernels.
bool weight_panels_used();

// The panel kernels: output columns [n_begin, n_end) (n_begin a multiple of 16) of the M rows of
// `input` (its BF16 panels) times w, whose bf16_panels (or fp8_panels) they read; out [M × w.rows].
// The FP8 kernel widens one 128-wide block of k of a panel at a time into `scratch`
// (kMatmulScratchMinFloats floats at least).
void matmul_bf16_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                          int64_t n_begin, int64_t n_end);
// Panel c (of `pairs` pairs of k) of w, BF16 or F8_E4M3, packed with AVX-512
// (weight_panels_avx512bf16.cpp).
void pack_weight_panel_avx512bf16(const MatrixView& w, int64_t pairs, int64_t c, void* panels);
void matmul_fp8_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                         int64_t n_begin, int64_t n_end, float* scratch);

}  // namespace s3::cpu
