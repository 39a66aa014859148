// weight_panels.h: BF16 weights packed once per weight version into the layout of the avx512bf16
// level's panel kernel (matmul_panels_avx512bf16.cpp), where each output is one chain over the
// pairs of k and a vector holds 16 output columns: no lane tree per output, and each weight value
// is loaded once per register tile of 6 input rows rather than once per 4. The layout: 64-column
// panels, panel c holding, for each pair q of k (K padded to kMatmulRowAlign), the 64 dwords
// (W[64c + j][2q], W[64c + j][2q + 1]), the even k in the low half, zero past the rows and past K;
// panel c starts at c × pairs × 64 dwords. A linear layer's view points at its panels through
// MatrixView::bf16_panels (model/qwen3_weights.cpp packs a model's the first time the CPU forward
// runs on it: Qwen3Weights::cpu_layers).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

constexpr int64_t kWeightPanelColumns = 64;

// Dwords the panels of a [rows × cols] weight take.
int64_t weight_panel_dwords(int64_t rows, int64_t cols);

// W (BF16) packed into `panels` (weight_panel_dwords(w.rows, w.cols) dwords), the panels split
// between the pool's threads (a move of values: any split gives the same panels).
void pack_weight_panels(const MatrixView& w, uint32_t* panels, ThreadPool& pool);

// Whether the matmul kernels of this CPU (cpu_info().level, capped by S3_SIMD) read panels, and
// S3_WEIGHT_PANELS is not 0: only the avx512bf16 level has a panel kernel.
bool weight_panels_used();

// The panel kernel: output columns [n_begin, n_end) (n_begin a multiple of 16) of the M rows of
// `input` (its BF16 panels) times w, whose bf16_panels it reads; out [M × w.rows].
void matmul_bf16_panel_columns_avx512bf16(float* out, const MatmulInput& input, const MatrixView& w, int64_t M,
                                          int64_t n_begin, int64_t n_end);

}  // namespace s3::cpu
