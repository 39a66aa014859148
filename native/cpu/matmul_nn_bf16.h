// matmul_nn_bf16.h: C[M × N] (+)= A[M × K] · B[K × N] with BF16 products, the trainer's matmuls
// under precision.train: bf16. Both operands are rounded to BF16 (round-to-nearest-even) once per
// call; the products are accumulated in f32 into the f32 C. Layouts and the accumulate flag are
// matmul_nn's (MatmulNnArgs: A through its strides, B row-major).
//
// Two paths, chosen by the SIMD level:
// - avx512bf16 (VDPBF16PS): B is rounded into k-pair-interleaved BF16 panels of 64 columns (pair
//   p of a panel holds B[2p][n], B[2p + 1][n] side by side for its 64 columns n, the panel's pairs
//   one after another); A into BF16 rows with k padded to an even count, or, when A is read
//   transposed (the dW = doutᵀ·inp product, whose A is stored [K × M]), into the same
//   pair-interleaved form in blocks of 16 rows (pair p of a block holds A[2p][i], A[2p + 1][i] for
//   its 16 rows i), as that is a streaming pass over the stored rows rather than a transposition.
//   Both once per call (the driver below). Each operand's pairs of k lie one after another, so a
//   register tile walks runs of memory rather than rows 2N or 2M values apart, which for N or M a
//   multiple of 1,024 fall on a few sets of L1 and evict each other. Each C element is one chain over the k pairs in
//   increasing order, starting from C (accumulate) or 0; one VDPBF16PS per pair adds both products
//   (exact in f32) to the lane. The order depends only on K: not on M, the register tile, the
//   cache blocking, the column split or the thread count.
// - every other level: A and B rounded to BF16 values held in f32, then that level's f32
//   matmul_nn kernels. A product of two BF16 values has at most 16 significant bits, so it is
//   exact in f32 and each FMA of the chain rounds only the sum: the chain is the f32 chain of
//   matmul_nn on the rounded operands.
// The two paths round their sums at different points (a pair per step against one product per
// step), so they agree to f32 rounding of the sums, as the f32 levels do among themselves; at one
// level and thread count the bits are fixed. VDPBF16PS also reads BF16 subnormals as zero and
// flushes subnormal results (docs/determinism.md); the portable path keeps them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/aligned_allocator.h"
#include "core/cpu_features.h"
#include "core/matmul_precision.h"
#include "core/thread_pool.h"
#include "cpu/matmul_nn.h"

namespace s3::cpu {

// Columns of B in one panel, and rows of A in one block, of the avx512bf16 layout.
constexpr int64_t kMatmulNnPanelColumns = 64;
constexpr int64_t kMatmulNnRowBlock = 16;

// The packed operands of the VDPBF16PS kernels. A's pair (k, k + 1) of row i, for even k, is the
// two BF16 values at a + (i / 16)·a_block + (i mod 16)·a_row + (k / 2)·a_pair: BF16 rows have
// a_row = the row length (even), a_pair = 2 and a_block = 0 (meaning 16·a_row: the rows one after
// another); pair-interleaved blocks have a_row = 2, a_pair = 32 and a_block = 32·⌈K / 2⌉. Values
// past K are zero.
struct MatmulNnBf16Args {
  float* c = nullptr;           // [M × N] f32, rows ldc apart
  const uint16_t* a = nullptr;
  // BF16 k pairs. The avx512bf16 layout: element (k, n) at b[(n / 64)·b_panel + (k / 2)·ldb +
  // 2(n mod 64) + k mod 2], ldb = 128, zero past N in the last panel. The tile layout: tiles.
  const uint16_t* b = nullptr;
  int64_t M = 0, N = 0, K = 0;
  int64_t a_row = 0, a_pair = 0, a_block = 0, ldb = 0, ldc = 0;
  // Values from one column block of B to the next: a 64-column panel (avx512bf16; at least
  // ⌈K / 2⌉ · ldb), or a 16-column block of tiles, where 0 means exactly a_row / 32 tiles per
  // block. A block may hold more pair rows than K needs (a product over the first keys of a head).
  int64_t b_panel = 0;
  // The tile layout only: the first step of 32 values of k the product takes, the caller knowing
  // that every product of the steps before it is zero (rows of a causal block that cannot see these
  // columns): each element's chain starts there, from C (accumulate) or 0. 0 elsewhere.
  int64_t first_step = 0;
  bool accumulate = false;
};

struct MatmulNnBf16Kernels {
  const char* name;
  // Columns [n_begin, n_end) of C, n_begin a multiple of 16; allocates nothing.
  void (*columns)(const MatmulNnBf16Args& args, int64_t n_begin, int64_t n_end);
  // One pair-interleaved row: out[2j] = bf16(even[j]), out[2j + 1] = bf16(odd[j]) (0 when odd is
  // null: the last, unpaired k) for j < n, rounded exactly as core/dtype.h's f32_to_bf16.
  void (*pack_pairs)(const float* even, const float* odd, int64_t n, uint16_t* out);
  // The AMX tile layout (matmul_nn_amx_kernel.h), every tile 16 rows × 64 bytes in one contiguous
  // kilobyte, every padding value zero: A as BF16 rows (a_pair = 2; A read transposed is
  // transposed while packing) of a_row values (a multiple of 32: `steps` = a_row / 32 tiles per 16
  // rows), M padded to a multiple of 32 rows, tile (row block r, step s) at a + (r × steps + s) ×
  // 512; B's pair rows padded to a multiple of 16 (steps × 16) and its columns to a multiple of 32
  // (ldb = 2 × that), tile (column block c, step s), rows = 16 pairs × 16 columns, at
  // b + (c × steps + s) × 512. Contiguous tiles rather than rows: rows K × 2 (or N × 4) bytes apart
  // fall on one or two sets of L1, so a tile's rows evict each other.
  bool tiles = false;
  // The tile layout only (null elsewhere): rows [i0, i0 + rows), rows ≤ 16, of an A read
  // transposed (element (i, k) at src[k × ld + i − i0], src pointing at column i0), as one 16-row
  // block of `steps` tiles (16 rows × 32 values of k each), zero past K and past `rows`, rounded
  // exactly as core/dtype.h's f32_to_bf16.
  void (*pack_transposed_block)(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps, uint16_t* tiles) = nullptr;
  // The tile layout only (null elsewhere): one 16-column block of the B tiles of B = Wᵀ, from
  // `rows` ≤ 16 rows of W [· × K] (rows ldw apart, w pointing at the block's first): `steps` tiles
  // whose row q of step s holds, for each column j, the pair (W[j][32s + 2q], W[j][32s + 2q + 1]),
  // zero past K and past `rows`, rounded exactly as core/dtype.h's f32_to_bf16.
  void (*pack_rows_as_b_block)(const float* w, int64_t ldw, int64_t K, int64_t rows, int64_t steps, uint16_t* tiles) = nullptr;
  // The tile layout only (null elsewhere): rows [i0, i0 + rows), rows ≤ 16, of an A with
  // contiguous rows (row i − i0 at src + (i − i0) × ld) as one 16-row block of `steps` tiles, zero
  // past K and past `rows`, rounded exactly as core/dtype.h's f32_to_bf16.
  void (*pack_rows_block)(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps, uint16_t* tiles) = nullptr;
  // pack_pairs written 16 columns at a time, the pairs of columns [16j, 16j + 16) at out + j ×
  // stride, for ⌈n / 16⌉ such runs, the last zero past n: a pair row of B's tiles (amx), or of A's
  // blocks of 16 rows read transposed (avx512bf16).
  void (*pack_pairs_into_tiles)(const float* even, const float* odd, int64_t n, uint16_t* out, int64_t stride) = nullptr;
  // The tile layout only (null elsewhere): one tile of Aᵀ from A's tiles (matmul_nn_bf16_transpose_a):
  // out row i, i < 16, holds column `column` + i of the 16 rows of `top` (tile rows 64 bytes apart)
  // followed by the same column of the 16 rows of `bottom`.
  void (*transpose_a_tile)(const uint16_t* top, const uint16_t* bottom, int64_t column, uint16_t* out) = nullptr;
  // The tile layout only (null elsewhere): one pair row of B tiles from two rows of A's tiles
  // (`even`, `odd`: each row's start in its step-0 tile, steps 512 values apart): for each of
  // `blocks` 16-column blocks c, the pairs (even[k], odd[k]) of columns [16c, 16c + 16) at
  // row + c × block_stride. Values are moved, not rounded.
  void (*pair_tile_row_from_a_rows)(const uint16_t* even, const uint16_t* odd, int64_t blocks, uint16_t* row,
                                    int64_t block_stride) = nullptr;
  // The panel layout only (avx512bf16; null elsewhere): one 64-column panel of B = Wᵀ from `rows`
  // ≤ 64 rows of W [· × K] (rows ldw apart, w pointing at the panel's first): pair row q holds,
  // for each column j, the pair (W[j][2q], W[j][2q + 1]), ⌈K / 2⌉ pair rows, zero past K and past
  // `rows`, rounded exactly as core/dtype.h's f32_to_bf16.
  void (*pack_rows_as_b_panel)(const float* w, int64_t ldw, int64_t K, int64_t rows, uint16_t* panel) = nullptr;
};

// The BF16 kernels for `level`: VDPBF16PS at avx512bf16, AMX tiles at amx; nullptr below
// avx512bf16 (those levels take the portable path).
const MatmulNnBf16Kernels* matmul_nn_bf16_kernels_for(SimdLevel level);

extern const MatmulNnBf16Kernels kMatmulNnAvx512Bf16;
// TDPBF16PS on the tile registers (matmul_nn_amx.cpp): C tiles of 32 × 32 accumulate every step of
// k in increasing order, each step the tile instruction's 16 pairs; the order depends only on K.
extern const MatmulNnBf16Kernels kMatmulNnAmx;
// The same kernel over the software tile model of matmul_amx_model.cpp (tests, on CPUs without AMX).
extern const MatmulNnBf16Kernels kMatmulNnAmxModel;
// The avx512bf16 level's pair packing, and its packing of a transposed A into tiles (16 pair rows
// of 16 columns transposed in registers), which the AMX tables use.
void matmul_nn_pack_pairs_avx512bf16(const float* even, const float* odd, int64_t n, uint16_t* out);
void matmul_nn_pack_transposed_block_avx512bf16(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps,
                                                uint16_t* tiles);
void matmul_nn_pack_rows_as_b_block_avx512bf16(const float* w, int64_t ldw, int64_t K, int64_t rows, int64_t steps,
                                               uint16_t* tiles);
void matmul_nn_pack_rows_block_avx512bf16(const float* src, int64_t ld, int64_t K, int64_t rows, int64_t steps,
                                          uint16_t* tiles);
void matmul_nn_pack_pairs_into_tiles_avx512bf16(const float* even, const float* odd, int64_t n, uint16_t* out,
                                                int64_t stride);
void matmul_nn_pack_rows_as_b_panel_avx512bf16(const float* w, int64_t ldw, int64_t K, int64_t rows, uint16_t* panel);
void matmul_nn_transpose_a_tile_avx512bf16(const uint16_t* top, const uint16_t* bottom, int64_t column, uint16_t* out);
void matmul_nn_pair_tile_row_from_a_rows_avx512bf16(const uint16_t* even, const uint16_t* odd, int64_t blocks, uint16_t* row,
                                                    int64_t block_stride);

// The tile layout's units (MatmulNnBf16Kernels::tiles).
constexpr int64_t kMatmulNnTileRows = 16, kMatmulNnTileK = 32, kMatmulNnTileValues = kMatmulNnTileRows * kMatmulNnTileK;

// The packed operands' shape in the kernels' layout, for A as BF16 rows (not the avx512bf16
// level's pair-interleaved A): a_row values per row for a_rows rows (a_values in all); for B,
// pair_rows pair rows, ldb values from one to the next within a column block, b_panel values from
// one column block to the next (MatmulNnBf16Args), b_values in all.
struct MatmulNnBf16Sizes {
  int64_t a_row = 0, a_rows = 0, a_values = 0, pair_rows = 0, ldb = 0, b_panel = 0, b_values = 0;
};
MatmulNnBf16Sizes matmul_nn_bf16_sizes(const MatmulNnBf16Kernels& kernels, int64_t M, int64_t N, int64_t K);

// Row i of A, given as a_row BF16 values (zero past K), into `a` in the kernels' layout.
void matmul_nn_place_a_row(const MatmulNnBf16Kernels& kernels, const uint16_t* row, int64_t i, int64_t a_row, uint16_t* a);

// Pair row q of a B of `count` columns into `b` in the kernels' layout (sizes from
// matmul_nn_bf16_sizes for N = count): the columns of rows 2q and 2q + 1 of src (rows ld apart;
// the odd row zero when 2q + 1 = K) side by side, then zeros to the end of the row's last column
// block; all zeros when q ≥ ⌈K/2⌉.
void matmul_nn_pack_pair_row(const MatmulNnBf16Kernels& kernels, const float* src, int64_t ld, int64_t K, int64_t count,
                             uint16_t* b, const MatmulNnBf16Sizes& sizes, int64_t q);

// The tile layout only: one pair row of B tiles, the pairs (even[j], odd[j]) of `count` columns
// (odd null: zeros; even null: every pair zero), as the rows of `blocks` tiles of 16 columns, block
// c's at row + c × block_stride, zero past count. Rounded by the kernels' pack_pairs_into_tiles.
void matmul_nn_place_pair_tile_row(const MatmulNnBf16Kernels& kernels, const float* even, const float* odd, int64_t count,
                                   uint16_t* row, int64_t block_stride, int64_t blocks);

// The tile layout only: the pair row matmul_nn_place_pair_tile_row writes for rows i and i + 1 of
// an A [· × K] from their f32 values (count = K), taken from A packed in the kernels' tile layout
// (a_row values per row) instead: the same BF16 values moved, not rounded again; blocks past A's
// row are zero.
void matmul_nn_place_pair_tile_row_from_a(const MatmulNnBf16Kernels& kernels, const uint16_t* a, int64_t a_row, int64_t i,
                                          uint16_t* row, int64_t block_stride, int64_t blocks);

// The tile layout only: rows [i0, i0 + 16) of A [M × K] (element (i, k) at src[i × row_stride +
// k × col]) as their `steps` tiles at `tiles`, zero past M and K, rounded exactly as
// core/dtype.h's f32_to_bf16: by the kernels' pack_rows_block for contiguous rows (col = 1), their
// pack_transposed_block for rows read transposed (row_stride = 1), value by value otherwise.
void matmul_nn_pack_a_tile_block(const MatmulNnBf16Kernels& kernels, const float* src, int64_t row_stride, int64_t col,
                                 int64_t M, int64_t K, int64_t i0, int64_t steps, uint16_t* tiles);

// B [K × N] rounded and packed for one table of kernels, as MatmulNnBf16Args describes (tile rows
// on cache lines): packed once, it serves every product that shares it (the LM head's dX, one per
// chunk of rows).
struct MatmulNnBf16PackedB {
  const MatmulNnBf16Kernels* kernels = nullptr;
  CacheLineVector<uint16_t> values;
  int64_t K = 0, N = 0, ldb = 0, panel = 0;  // panel: MatmulNnBf16Args::b_panel
};

// The tile layout only: A [M × K] rounded and packed as MatmulNnBf16Kernels::tiles describes
// (a_row values per row, M padded to a multiple of 32 rows). Packed once, it serves every product
// that shares it (the q, k and v projections of one normed input), and the tiles of Aᵀ are
// transposed from it (matmul_nn_bf16_transpose_a) without reading the f32 values again.
struct MatmulNnBf16PackedA {
  const MatmulNnBf16Kernels* kernels = nullptr;
  CacheLineVector<uint16_t> values;
  int64_t M = 0, K = 0, a_row = 0;
};

// A [M × K] (element (i, k) at a[i × row_stride + k × col]) packed for tile `kernels` into `out`,
// rounded exactly as core/dtype.h's f32_to_bf16 (std::invalid_argument for kernels without the
// tile layout).
void matmul_nn_bf16_pack_a(MatmulNnBf16PackedA& out, const float* a, int64_t row_stride, int64_t col, int64_t M, int64_t K,
                           const MatmulNnBf16Kernels& kernels, ThreadPool& pool);
// The tiles of Aᵀ [K × M] from those of A: the values matmul_nn_bf16_pack_a gives for Aᵀ, moved
// as 16 × 16 blocks of BF16 values rather than read and rounded again.
void matmul_nn_bf16_transpose_a(MatmulNnBf16PackedA& out, const MatmulNnBf16PackedA& a, ThreadPool& pool);
// C (+)= A·B on both operands packed (args.a and args.b are not read; M, K and N must be the
// packed ones, and both packed for one table: std::invalid_argument otherwise): the bits of
// matmul_nn_bf16 on the f32 operands.
void matmul_nn_bf16(const MatmulNnArgs& args, const MatmulNnBf16PackedA& a, const MatmulNnBf16PackedB& b, ThreadPool& pool);

// The rounded operands of one call (the driver keeps one per calling thread).
struct MatmulNnBf16Scratch {
  CacheLineVector<uint16_t> a;       // avx512bf16 and amx: packed as MatmulNnBf16Args describes
  MatmulNnBf16PackedB b;
  std::vector<float> a_f32, b_f32;   // other levels: A [M × K] and B [K × N] as BF16 values in f32
};

// C (+)= A·B with BF16 products at cpu_info().level, or at `level` (tests compare levels). The
// pool rounds the operands and then splits C's columns as matmul_nn does.
void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool);
void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool, SimdLevel level);
// With a given kernel table (tests run kMatmulNnAmxModel this way).
void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool, const MatmulNnBf16Kernels& kernels);

// B [K × N] (rows ldb apart) packed for `kernels` into `out`, and C (+)= A·B on it: the bits of
// matmul_nn_bf16(args with that B, pool, kernels). args.b and args.ldb are not read; K and N must
// be the packed ones (std::invalid_argument otherwise).
void matmul_nn_bf16_pack_b(MatmulNnBf16PackedB& out, const float* b, int64_t ldb, int64_t K, int64_t N,
                           const MatmulNnBf16Kernels& kernels, ThreadPool& pool);
void matmul_nn_bf16(const MatmulNnArgs& args, const MatmulNnBf16PackedB& b, ThreadPool& pool);

// B = Wᵀ packed for `kernels` (the amx tiles or the avx512bf16 panels) into `out` straight from W
// [N × K] (rows ldw apart), with no transposed copy: the bits matmul_nn_bf16_pack_b gives for Wᵀ,
// so a linear layer's out = inp · Wᵀ runs as C = A·B on weights packed once (std::invalid_argument
// for kernels that cannot pack W's rows).
void matmul_nn_bf16_pack_b_transposed(MatmulNnBf16PackedB& out, const float* w, int64_t ldw, int64_t K, int64_t N,
                                      const MatmulNnBf16Kernels& kernels, ThreadPool& pool);

// matmul_nn (f32) or matmul_nn_bf16, by the trainer's precision.
void matmul_nn(const MatmulNnArgs& args, MatmulPrecision precision, ThreadPool& pool);

}  // namespace s3::cpu
