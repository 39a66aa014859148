// matmul.h: out = inp · Wᵀ for a linear layer whose weight W stays in its checkpoint dtype
// (f32, bf16, f16 or fp8 with 128 × 128 block scales). This is the CPU's hot spot.
//
// Every output element is the dot product of one input row and one weight row, accumulated in a
// fixed order that depends only on K and the SIMD level: lane l of a vector accumulator sums the
// products at k ≡ l (mod lanes) in increasing k, then the lanes are added in a fixed tree. No
// element's order depends on M, on which rows share a register tile, on the thread count or on
// whether the weights were converted in registers or through a packed panel. So a sequence's
// logits are bit-identical whether it is computed alone or batched with others (the engine's
// determinism guarantee); the scalar, AVX2 and AVX-512 levels agree only to f32 rounding.
//
// The avx512bf16 level multiplies BF16 and FP8 weights by the input rounded to BF16 (VDPBF16PS,
// f32 accumulation; see matmul_avx512bf16.cpp and docs/determinism.md): its bits differ from the
// f32 levels by BF16 input rounding, while F32 and F16 weights keep the exact f32 path of the
// AVX-512 level. Its order per element is as fixed (lane l sums the pairs at k ≡ 2l, 2l + 1
// (mod 32)), so the same invariances hold at that level. BF16 weights that carry panels
// (MatrixView::bf16_panels, cpu/weight_panels.h: the model's, packed at load) are summed there in
// one chain over the pairs of k instead, for every M: the same invariances, other bits. FP8
// weights that carry panels (MatrixView::fp8_panels) the same, one chain per 128-wide block of k,
// each block's sum times its scale added to a running sum in increasing k.
//
// The amx level multiplies the same BF16-rounded input by BF16 and FP8 weights with AMX tiles
// (TDPBF16PS; matmul_amx_kernel.h): each output's products are summed in an order fixed by K and
// by the tile instruction, the same for every M, tile position and thread split.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

// Rows of per-thread scratch a kernel may use (for converted weight rows), each of K rounded up
// to kMatmulRowAlign floats: 16 such rows hold the AMX kernel's two 16-row BF16 weight panels.
constexpr int64_t kMatmulScratchRows = 16;
// Floats of per-thread scratch at least, whatever K: one 128-wide block of k of an FP8 weight panel
// widened to BF16 (64 pairs × 64 columns of dwords; cpu/weight_panels.h).
constexpr int64_t kMatmulScratchMinFloats = 64 * 64;
// Input rows (and weight rows) per AMX tile, and BF16 values of k per tile row (64 bytes).
constexpr int64_t kMatmulTileRows = 16;
constexpr int64_t kMatmulTileK = 32;
// The BF16 input rows and the scratch rows are padded to a multiple of this many elements (one
// 32-value VDPBF16PS step), the padding zero in the input.
constexpr int64_t kMatmulRowAlign = 32;
// Input rows per panel of the avx512bf16 level's layout (MatmulInput::panels): one register tile.
constexpr int64_t kMatmulPanelRows = 4;
// Panel input (BF16 bytes) per block of rows at most: matmul_forward hands a kernel that reads
// panels one block of rows per call, so the block is read from L2 while the weights stream past. Measured on Zen 5
// (1 MiB L2) with the 0.6B shapes at 512 and 2,048 rows: 384 KiB ran fastest of 96–768 KiB (+10–40%
// over one block of all rows, which falls to L3 from about 256 rows at K = 3,072); 640 KiB was as
// fast.
constexpr int64_t kMatmulPanelBlockBytes = 384 * 1024;

// Input tiles (BF16 bytes) per block of rows at most, for the amx level: its work items pack their
// weight panels as tiles and pass every group of input rows over them, so input tiles that no
// longer fit in L2 (1 MiB of the 2 MiB of Sapphire and Emerald Rapids) would be read from L3 once
// per 64 output columns. Measured on a 5th-generation Xeon (2 threads, 0.6B shapes): at 2,048 rows
// 1.44x (K = 1,024) and 1.25x (K = 3,072) over one block of all rows, and at 512 rows of K = 3,072
// 1.2x; 1.5 MiB ran as fast, 512 KiB slower at K = 3,072.
constexpr int64_t kMatmulTileBlockBytes = 1024 * 1024;

// Input rows per block of tiles of bf16_stride values: M split into as few blocks as keep each
// within kMatmulTileBlockBytes, of equal whole groups of kMatmulTileRows.
int64_t matmul_tile_block_rows(int64_t bf16_stride, int64_t M);

// Input rows per block for panels of bf16_stride values: M split into as few blocks as keep each
// within kMatmulPanelBlockBytes, of equal whole panels (a last block of a few rows would cost a whole
// pass over the weights). Out of line, in baseline code, as every helper the SIMD files share.
int64_t matmul_panel_block_rows(int64_t bf16_stride, int64_t M);

// The input of one call as the kernels read it: the f32 rows, and for kernels that multiply in
// BF16 the same rows rounded to BF16 once per call (round-to-nearest-even; padded with zeros to
// bf16_stride = K rounded up to kMatmulRowAlign), so no tile rounds them again, in one of two
// layouts.
//
// For tile kernels the rounded rows go once per call into AMX B tiles ("VNNI" order): for
// each group of kMatmulTileRows input rows (the last padded with zero rows) and each
// kMatmulTileK-wide step s of k, one 16 × 16 tile of dwords whose row r, column j holds the BF16
// pair (x[j][32s + 2r], x[j][32s + 2r + 1]), the even k in the low half. Tile (g, s) starts at
// tiles + (g × steps + s) × 256, steps = bf16_stride / kMatmulTileK.
//
// Kernels that read panels get the rounded rows in this layout: for each group
// of kMatmulPanelRows input rows (the last padded with zero rows) and each kMatmulRowAlign-wide step
// s of k, the group's rows' 32 values of that step one after another, so a register tile's input
// is one contiguous stream: row r of group g, step s at panels + ((g × steps + s) × kMatmulPanelRows
// + r) × kMatmulRowAlign, steps = bf16_stride / kMatmulRowAlign.
struct MatmulInput {
  const float* f32 = nullptr;     // [M × K] row-major
  int64_t bf16_stride = 0;         // K rounded up to kMatmulRowAlign wherever tiles or panels is set
  const uint32_t* tiles = nullptr;  // the B tiles above; null unless the kernels pack them and a weight is BF16 or FP8
  const uint16_t* panels = nullptr;  // the panels above; null unless the kernels read them and a weight is BF16 or FP8
};

// One implementation per SIMD level. `columns` computes output columns [n_begin, n_end) of
// every row given (the caller may hand it a block of rows: MatmulInput's pointers moved to the
// block's first row); the caller hands the threads their items and scratch (the instruction-set
// files allocate nothing; see matmul.cpp).
struct MatmulKernels {
  const char* name;
  // Whether `columns` multiplies BF16 and FP8 weights by the input rounded to BF16 (the
  // avx512bf16 and amx levels), which it then reads as inp.tiles or inp.panels.
  bool rounds_input_to_bf16;
  // out: [M × N] f32 (N = w.rows), row-major; inp: M rows of K = w.cols;
  // scratch: max(kMatmulScratchRows × (K rounded up to kMatmulRowAlign), kMatmulScratchMinFloats) f32.
  void (*columns)(float* out, const MatmulInput& inp, const MatrixView& w, int64_t M, int64_t n_begin, int64_t n_end,
                  float* scratch);
  // Whether `columns` reads the rounded input as inp.tiles (the amx level's kernels).
  bool packs_input_into_tiles = false;
  // Whether `columns` reads the rounded input as inp.panels (the avx512bf16 level).
  bool packs_input_into_panels = false;
  // Output columns per work item of a prefill-sized input (M ≥ 16): a multiple of the level's
  // register tile (48 covers 4, 6, 3 and 16 columns; the amx level's 2 × 2 block of tiles needs 32).
  int64_t prefill_chunk_columns = 48;
  // Whether `columns` multiplies BF16 and FP8 weights that carry MatrixView::bf16_panels or
  // fp8_panels on those panels (cpu/weight_panels.h; the avx512bf16 level), each output then one
  // chain over the pairs of k (FP8: one per 128-wide block of k, scaled into a running sum).
  bool reads_weight_panels = false;
};

// out: [M × N] row-major; inp: [M × K] row-major; w: [N × K] (see matrix_view.h). out must not
// alias inp. The pool's threads claim chunks of output columns (with panels, per block of rows) as
// they become free; the bits do not depend on which thread computes what.
void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels);
void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool);

// Several weights with the same K applied to one input in a single parallel pass (q/k/v, gate/up):
// outputs[i].out = inp · outputs[i].w ᵀ. Threads split the weights' output columns as if the
// matrices were stacked, so one token's decode step waits for the pool once instead of once per
// matrix; every element is computed exactly as by matmul_forward.
struct MatmulOutput {
  float* out;            // [M × w.rows]
  const MatrixView* w;   // [w.rows × K]
};
void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels);
void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool);

// The kernels of one SIMD level (tests and benchmarks compare levels); nullptr if not built.
const MatmulKernels* matmul_kernels_for(SimdLevel level);
// The kernels of cpu_info().level.
const MatmulKernels& matmul_kernels();

extern const MatmulKernels kMatmulAvx2;
extern const MatmulKernels kMatmulAvx512;
extern const MatmulKernels kMatmulAvx512Bf16;
extern const MatmulKernels kMatmulAmx;
// The AMX kernels over a software model of the tile registers and TDPBF16PS (matmul_amx_model.cpp):
// the same blocking, packing, tails and FP8 scaling, runnable on any CPU with AVX512-BF16, so the
// tests check the amx level's logic where no AMX exists. Never selected by a level.
extern const MatmulKernels kMatmulAmxModel;

}  // namespace s3::cpu
