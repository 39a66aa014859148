// matmul_nn_bf16.cpp: the BF16-product C (+)= A·B of matmul_nn_bf16.h: rounding and packing the
// operands once per call (or once for the products that share them, A's transpose moved from A's
// tiles), the per-level choice between the VDPBF16PS kernels and the portable path, and the split
// of columns between threads.
#include "cpu/matmul_nn_bf16.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/dtype.h"
#include "core/grow_only.h"
#include "cpu/convert.h"
#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

// Rows of A or k pairs of B each pool unit rounds: a fixed unit, so the work split never matters
// (rounding is elementwise anyway).
constexpr int64_t kRowsPerUnit = 32;

inline float round_to_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

inline float a_at(const MatmulNnArgs& p, int64_t i, int64_t k) { return p.a[i * p.a_row + k * p.a_col]; }

// Calls fn(begin, end) over the pool on consecutive ranges of at most kRowsPerUnit of [0, n).
template <typename Fn>
void for_row_units(ThreadPool& pool, int64_t n, Fn fn) {
  const int64_t units = (n + kRowsPerUnit - 1) / kRowsPerUnit;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    for (size_t u = begin; u < end; u++) fn(int64_t(u) * kRowsPerUnit, std::min(n, int64_t(u + 1) * kRowsPerUnit));
  });
}

inline int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// Every pair row of B over the pool, in the kernels' layout (matmul_nn_pack_pair_row).
void pack_pair_rows(const MatmulNnBf16Kernels& kernels, const float* src, int64_t ld, int64_t K, int64_t count,
                    uint16_t* out, const MatmulNnBf16Sizes& sizes, ThreadPool& pool) {
  for_row_units(pool, sizes.pair_rows, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; q++) matmul_nn_pack_pair_row(kernels, src, ld, K, count, out, sizes, q);
  });
}

// A [M × K] (element (i, k) at a[i × row_stride + k × col]) into the tile layout (a_row values
// per row, `rows` rows: zero past M), one unit of 32 rows at a time over the pool.
void pack_a_tiles(const MatmulNnBf16Kernels& kernels, const float* a, int64_t row_stride, int64_t col, int64_t M, int64_t K,
                  uint16_t* out, int64_t row, int64_t rows, ThreadPool& pool) {
  const int64_t steps = row / kMatmulNnTileK;
  for_row_units(pool, rows, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i += kMatmulNnTileRows) {
      matmul_nn_pack_a_tile_block(kernels, a, row_stride, col, M, K, i, steps,
                                  out + (i / kMatmulNnTileRows) * steps * kMatmulNnTileValues);
    }
  });
}

void require_tiles(const MatmulNnBf16Kernels& kernels, const char* caller) {
  if (!kernels.tiles) throw std::invalid_argument(std::string(caller) + ": the " + kernels.name + " kernels do not read the tile layout");
}

// `out` shaped for a B [K × N] packed for the kernels (its values not yet written); returns the sizes.
MatmulNnBf16Sizes shape_packed_b(MatmulNnBf16PackedB& out, const MatmulNnBf16Kernels& kernels, int64_t K, int64_t N) {
  const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, 1, N, K);
  out.kernels = &kernels;
  out.K = K;
  out.N = N;
  out.ldb = sizes.ldb;
  out.panel = sizes.b_panel;
  hold_at_least(out.values, sizes.b_values);
  return sizes;
}

// B [K × N] (rows ldb apart) packed into `out` as the kernels read it.
void pack_b(const MatmulNnBf16Kernels& kernels, const float* b, int64_t ldb, int64_t K, int64_t N,
            MatmulNnBf16PackedB& out, ThreadPool& pool) {
  const MatmulNnBf16Sizes sizes = shape_packed_b(out, kernels, K, N);
  pack_pair_rows(kernels, b, ldb, K, N, out.values.data(), sizes, pool);
}

// The kernels' arguments for C, its shape and B already packed (A still to be set).
MatmulNnBf16Args product_args(const MatmulNnArgs& p, const MatmulNnBf16PackedB& b) {
  MatmulNnBf16Args out;
  out.M = p.M;
  out.N = p.N;
  out.K = p.K;
  out.c = p.c;
  out.ldc = p.ldc;
  out.accumulate = p.accumulate;
  out.b = b.values.data();
  out.ldb = b.ldb;
  out.b_panel = b.panel;
  return out;
}

// A packed for the kernels into scratch, with B already packed: the kernels' arguments.
MatmulNnBf16Args pack_a(const MatmulNnArgs& p, const MatmulNnBf16PackedB& b, MatmulNnBf16Scratch& scratch,
                        ThreadPool& pool) {
  const MatmulNnBf16Kernels& kernels = *b.kernels;
  MatmulNnBf16Args out = product_args(p, b);
  const int64_t pairs = (p.K + 1) / 2;
  if (kernels.tiles) {  // the AMX layout (MatmulNnBf16Kernels::tiles)
    const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, p.M, p.N, p.K);
    out.a_row = sizes.a_row;
    out.a_pair = 2;
    hold_at_least(scratch.a, sizes.a_values);
    pack_a_tiles(kernels, p.a, p.a_row, p.a_col, p.M, p.K, scratch.a.data(), out.a_row, sizes.a_rows, pool);
    out.a = scratch.a.data();
    return out;
  }
  hold_at_least(scratch.a, round_up(p.M, kMatmulNnRowBlock) * 2 * pairs);
  uint16_t* a = scratch.a.data();
  if (p.a_row == 1) {  // A stored [K × M] (dW = doutᵀ·inp): pair its stored rows, 16 values of each at a time
    out.a_row = 2;
    out.a_pair = 2 * kMatmulNnRowBlock;
    out.a_block = out.a_pair * pairs;
    for_row_units(pool, pairs, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; q++) {
        const float* even = p.a + 2 * q * p.a_col;
        kernels.pack_pairs_into_tiles(even, 2 * q + 1 < p.K ? even + p.a_col : nullptr, p.M, a + q * out.a_pair, out.a_block);
      }
    });
  } else {  // BF16 rows, padded to an even length
    out.a_row = 2 * pairs;
    out.a_pair = 2;
    const ConvertKernels& convert = convert_kernels();
    for_row_units(pool, p.M, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; i++) {
        uint16_t* row = a + i * out.a_row;
        if (p.a_col == 1) {  // contiguous: the bulk SIMD rounding (bit-identical to f32_to_bf16)
          convert.f32_to_bf16(p.a + i * p.a_row, row, size_t(p.K));
        } else {
          for (int64_t k = 0; k < p.K; k++) row[k] = f32_to_bf16(a_at(p, i, k));
        }
        if (out.a_row > p.K) row[p.K] = 0;
      }
    });
  }
  out.a = a;
  return out;
}

// The product on packed operands, C's columns split over the pool.
void run_columns(const MatmulNnBf16Kernels& kernels, const MatmulNnBf16Args& packed, ThreadPool& pool) {
  const int64_t units = (packed.N + kMatmulNnColumnsPerUnit - 1) / kMatmulNnColumnsPerUnit;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    kernels.columns(packed, int64_t(begin) * kMatmulNnColumnsPerUnit, std::min(packed.N, int64_t(end) * kMatmulNnColumnsPerUnit));
  });
}

// A [M × K] and B [K × N] rounded to BF16 values in f32 (row-major, contiguous) into scratch, as
// the f32 kernels' arguments.
MatmulNnArgs round_operands(const MatmulNnArgs& p, MatmulNnBf16Scratch& scratch, ThreadPool& pool) {
  hold_at_least(scratch.a_f32, p.M * p.K);
  hold_at_least(scratch.b_f32, p.K * p.N);
  float* a = scratch.a_f32.data();
  float* b = scratch.b_f32.data();
  for_row_units(pool, p.M, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) {
      for (int64_t k = 0; k < p.K; k++) a[i * p.K + k] = round_to_bf16(a_at(p, i, k));
    }
  });
  for_row_units(pool, p.K, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; k++) {
      for (int64_t n = 0; n < p.N; n++) b[k * p.N + n] = round_to_bf16(p.b[k * p.ldb + n]);
    }
  });
  MatmulNnArgs out = matmul_nn_args(p.c, a, b, p.M, p.N, p.K, p.accumulate);
  out.ldc = p.ldc;
  return out;
}

// Kept per calling thread: the trainer calls this with the same few shapes every step, and fresh
// buffers of the LM head's size would be faulted in again each time.
MatmulNnBf16Scratch& calling_thread_scratch() {
  thread_local MatmulNnBf16Scratch scratch;
  return scratch;
}

}  // namespace

MatmulNnBf16Sizes matmul_nn_bf16_sizes(const MatmulNnBf16Kernels& kernels, int64_t M, int64_t N, int64_t K) {
  MatmulNnBf16Sizes sizes;
  const int64_t pairs = (K + 1) / 2;
  if (kernels.tiles) {
    sizes.pair_rows = round_up(pairs, kMatmulNnTileRows);
    sizes.a_row = 2 * sizes.pair_rows;
    sizes.a_rows = round_up(M, 2 * kMatmulNnTileRows);
    sizes.ldb = 2 * round_up(N, 2 * kMatmulNnTileRows);
    sizes.b_panel = sizes.pair_rows / kMatmulNnTileRows * kMatmulNnTileValues;
    sizes.b_values = sizes.pair_rows * sizes.ldb;
  } else {
    sizes.pair_rows = pairs;
    sizes.a_row = 2 * pairs;
    sizes.a_rows = M;
    sizes.ldb = 2 * kMatmulNnPanelColumns;
    sizes.b_panel = pairs * sizes.ldb;
    sizes.b_values = (N + kMatmulNnPanelColumns - 1) / kMatmulNnPanelColumns * sizes.b_panel;
  }
  sizes.a_values = sizes.a_rows * sizes.a_row;
  return sizes;
}

void matmul_nn_place_a_row(const MatmulNnBf16Kernels& kernels, const uint16_t* row, int64_t i, int64_t a_row, uint16_t* a) {
  if (!kernels.tiles) {
    std::copy(row, row + a_row, a + i * a_row);
    return;
  }
  const int64_t steps = a_row / kMatmulNnTileK;
  uint16_t* tiles = a + (i / kMatmulNnTileRows) * steps * kMatmulNnTileValues + (i % kMatmulNnTileRows) * kMatmulNnTileK;
  for (int64_t s = 0; s < steps; s++) {
    std::memcpy(tiles + s * kMatmulNnTileValues, row + s * kMatmulNnTileK, kMatmulNnTileK * sizeof(uint16_t));
  }
}

void matmul_nn_pack_pair_row(const MatmulNnBf16Kernels& kernels, const float* src, int64_t ld, int64_t K, int64_t count,
                             uint16_t* b, const MatmulNnBf16Sizes& sizes, int64_t q) {
  const float* even = q < (K + 1) / 2 ? src + 2 * q * ld : nullptr;
  const float* odd = even != nullptr && 2 * q + 1 < K ? even + ld : nullptr;
  if (kernels.tiles) {  // column block c's 16 pairs of this row: row q % 16 of tile (c, q / 16)
    matmul_nn_place_pair_tile_row(kernels, even, odd, count,
                                  b + (q / kMatmulNnTileRows) * kMatmulNnTileValues + (q % kMatmulNnTileRows) * kMatmulNnTileK,
                                  sizes.b_panel, sizes.ldb / kMatmulNnTileK);
    return;
  }
  // Panel c's pair row q: its 64 columns' pairs, zero past count.
  for (int64_t n0 = 0; n0 < count; n0 += kMatmulNnPanelColumns) {
    uint16_t* out = b + (n0 / kMatmulNnPanelColumns) * sizes.b_panel + q * sizes.ldb;
    const int64_t width = std::min(kMatmulNnPanelColumns, count - n0);
    if (even != nullptr) kernels.pack_pairs(even + n0, odd != nullptr ? odd + n0 : nullptr, width, out);
    std::fill(out + (even != nullptr ? 2 * width : 0), out + sizes.ldb, uint16_t(0));
  }
}

void matmul_nn_place_pair_tile_row(const MatmulNnBf16Kernels& kernels, const float* even, const float* odd, int64_t count,
                                   uint16_t* row, int64_t block_stride, int64_t blocks) {
  int64_t filled = 0;
  if (even != nullptr && count > 0) {
    kernels.pack_pairs_into_tiles(even, odd, count, row, block_stride);
    filled = (count + kMatmulNnTileRows - 1) / kMatmulNnTileRows;
  }
  for (int64_t c = filled; c < blocks; c++) std::fill_n(row + c * block_stride, kMatmulNnTileK, uint16_t(0));
}

void matmul_nn_place_pair_tile_row_from_a(const MatmulNnBf16Kernels& kernels, const uint16_t* a, int64_t a_row, int64_t i,
                                          uint16_t* row, int64_t block_stride, int64_t blocks) {
  const int64_t steps = a_row / kMatmulNnTileK;
  const auto row_start = [&](int64_t r) {
    return a + (r / kMatmulNnTileRows) * steps * kMatmulNnTileValues + (r % kMatmulNnTileRows) * kMatmulNnTileK;
  };
  const int64_t filled = std::min(blocks, a_row / kMatmulNnTileRows);
  kernels.pair_tile_row_from_a_rows(row_start(i), row_start(i + 1), filled, row, block_stride);
  for (int64_t c = filled; c < blocks; c++) std::fill_n(row + c * block_stride, kMatmulNnTileK, uint16_t(0));
}

void matmul_nn_pack_a_tile_block(const MatmulNnBf16Kernels& kernels, const float* src, int64_t row_stride, int64_t col,
                                 int64_t M, int64_t K, int64_t i0, int64_t steps, uint16_t* tiles) {
  const int64_t rows = std::clamp<int64_t>(M - i0, 0, kMatmulNnTileRows);
  const float* block = src + std::min(i0, M) * row_stride;
  if (col == 1 && kernels.pack_rows_block != nullptr) {
    kernels.pack_rows_block(block, row_stride, K, rows, steps, tiles);
  } else if (row_stride == 1 && kernels.pack_transposed_block != nullptr) {
    kernels.pack_transposed_block(block, col, K, rows, steps, tiles);
  } else {
    for (int64_t s = 0; s < steps; s++) {
      for (int64_t r = 0; r < kMatmulNnTileRows; r++) {
        uint16_t* out = tiles + s * kMatmulNnTileValues + r * kMatmulNnTileK;
        for (int64_t j = 0; j < kMatmulNnTileK; j++) {
          const int64_t k = s * kMatmulNnTileK + j;
          out[j] = r < rows && k < K ? f32_to_bf16(block[r * row_stride + k * col]) : uint16_t(0);
        }
      }
    }
  }
}

const MatmulNnBf16Kernels* matmul_nn_bf16_kernels_for(SimdLevel level) {
  if (level >= SimdLevel::Amx) return &kMatmulNnAmx;
  return level >= SimdLevel::Avx512Bf16 ? &kMatmulNnAvx512Bf16 : nullptr;
}

void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool) { matmul_nn_bf16(args, pool, cpu_info().level); }

void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool, SimdLevel level) {
  if (args.M <= 0 || args.N <= 0) return;
  if (const MatmulNnBf16Kernels* kernels = matmul_nn_bf16_kernels_for(level)) {
    matmul_nn_bf16(args, pool, *kernels);
  } else {
    matmul_nn(round_operands(args, calling_thread_scratch(), pool), pool, *matmul_nn_kernels_for(level));
  }
}

void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool, const MatmulNnBf16Kernels& kernels) {
  if (args.M <= 0 || args.N <= 0) return;
  MatmulNnBf16Scratch& scratch = calling_thread_scratch();
  pack_b(kernels, args.b, args.ldb, args.K, args.N, scratch.b, pool);
  run_columns(kernels, pack_a(args, scratch.b, scratch, pool), pool);
}

void matmul_nn_bf16_pack_b(MatmulNnBf16PackedB& out, const float* b, int64_t ldb, int64_t K, int64_t N,
                           const MatmulNnBf16Kernels& kernels, ThreadPool& pool) {
  pack_b(kernels, b, ldb, K, N, out, pool);
}

void matmul_nn_bf16_pack_b_transposed(MatmulNnBf16PackedB& out, const float* w, int64_t ldw, int64_t K, int64_t N,
                                      const MatmulNnBf16Kernels& kernels, ThreadPool& pool) {
  if (kernels.pack_rows_as_b_panel != nullptr) {
    const MatmulNnBf16Sizes sizes = shape_packed_b(out, kernels, K, N);
    const int64_t panels = (N + kMatmulNnPanelColumns - 1) / kMatmulNnPanelColumns;
    uint16_t* values = out.values.data();
    pool.parallel_for(size_t(panels), [&](size_t begin, size_t end, size_t) {  // rounding is elementwise: any split
      for (int64_t c = int64_t(begin); c < int64_t(end); c++) {
        const int64_t n0 = c * kMatmulNnPanelColumns;
        kernels.pack_rows_as_b_panel(w + n0 * ldw, ldw, K, std::min(kMatmulNnPanelColumns, N - n0), values + c * sizes.b_panel);
      }
    });
    return;
  }
  if (!kernels.tiles || kernels.pack_rows_as_b_block == nullptr) {
    throw std::invalid_argument(std::string("matmul_nn_bf16_pack_b_transposed: the ") + kernels.name +
                                " kernels cannot pack B from W's rows");
  }
  const MatmulNnBf16Sizes sizes = shape_packed_b(out, kernels, K, N);
  const int64_t steps = sizes.pair_rows / kMatmulNnTileRows, blocks = sizes.ldb / kMatmulNnTileK;
  uint16_t* values = out.values.data();
  // Each unit a fixed run of 16-column blocks (rounding is elementwise, so the split never matters).
  for_row_units(pool, blocks, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; c++) {
      const int64_t n0 = c * kMatmulNnTileRows;
      kernels.pack_rows_as_b_block(w + std::min(n0, N) * ldw, ldw, K, std::min<int64_t>(kMatmulNnTileRows, N - n0), steps,
                                   values + c * steps * kMatmulNnTileValues);
    }
  });
}

void matmul_nn_bf16(const MatmulNnArgs& args, const MatmulNnBf16PackedB& b, ThreadPool& pool) {
  if (b.kernels == nullptr || args.K != b.K || args.N != b.N) {
    throw std::invalid_argument("matmul_nn_bf16: B packed for K = " + std::to_string(b.K) + ", N = " + std::to_string(b.N) +
                                ", used for K = " + std::to_string(args.K) + ", N = " + std::to_string(args.N));
  }
  if (args.M <= 0 || args.N <= 0) return;
  run_columns(*b.kernels, pack_a(args, b, calling_thread_scratch(), pool), pool);
}

void matmul_nn_bf16_pack_a(MatmulNnBf16PackedA& out, const float* a, int64_t row_stride, int64_t col, int64_t M, int64_t K,
                           const MatmulNnBf16Kernels& kernels, ThreadPool& pool) {
  require_tiles(kernels, "matmul_nn_bf16_pack_a");
  const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, M, 1, K);
  out.kernels = &kernels;
  out.M = M;
  out.K = K;
  out.a_row = sizes.a_row;
  hold_at_least(out.values, sizes.a_values);
  pack_a_tiles(kernels, a, row_stride, col, M, K, out.values.data(), sizes.a_row, sizes.a_rows, pool);
}

void matmul_nn_bf16_transpose_a(MatmulNnBf16PackedA& out, const MatmulNnBf16PackedA& a, ThreadPool& pool) {
  if (a.kernels == nullptr) throw std::invalid_argument("matmul_nn_bf16_transpose_a: A is not packed");
  const MatmulNnBf16Kernels& kernels = *a.kernels;
  // A: row blocks of 16 (M padded to 32) × `steps` of 32 values of k (K padded to 32); Aᵀ the
  // other way round, so its block row r comes from A's step r / 2 and its step s from A's block
  // rows 2s and 2s + 1.
  const int64_t steps = a.a_row / kMatmulNnTileK;
  const MatmulNnBf16Sizes sizes = matmul_nn_bf16_sizes(kernels, a.K, 1, a.M);
  out.kernels = a.kernels;
  out.M = a.K;
  out.K = a.M;
  out.a_row = sizes.a_row;
  hold_at_least(out.values, sizes.a_values);
  const int64_t out_steps = sizes.a_row / kMatmulNnTileK, out_blocks = sizes.a_rows / kMatmulNnTileRows;
  const uint16_t* in = a.values.data();
  uint16_t* values = out.values.data();
  for_row_units(pool, out_blocks, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
      for (int64_t s = 0; s < out_steps; s++) {
        const uint16_t* top = in + (2 * s * steps + r / 2) * kMatmulNnTileValues;
        kernels.transpose_a_tile(top, top + steps * kMatmulNnTileValues, kMatmulNnTileRows * (r % 2),
                                 values + (r * out_steps + s) * kMatmulNnTileValues);
      }
    }
  });
}

void matmul_nn_bf16(const MatmulNnArgs& args, const MatmulNnBf16PackedA& a, const MatmulNnBf16PackedB& b, ThreadPool& pool) {
  if (a.kernels == nullptr || a.kernels != b.kernels || args.M != a.M || args.K != a.K || args.K != b.K || args.N != b.N) {
    throw std::invalid_argument("matmul_nn_bf16: A packed for M = " + std::to_string(a.M) + ", K = " + std::to_string(a.K) +
                                " and B for K = " + std::to_string(b.K) + ", N = " + std::to_string(b.N) +
                                (a.kernels != b.kernels ? " by other kernels" : "") + ", used for M = " +
                                std::to_string(args.M) + ", K = " + std::to_string(args.K) + ", N = " + std::to_string(args.N));
  }
  if (args.M <= 0 || args.N <= 0) return;
  MatmulNnBf16Args packed = product_args(args, b);
  packed.a = a.values.data();
  packed.a_row = a.a_row;
  packed.a_pair = 2;
  run_columns(*b.kernels, packed, pool);
}

void matmul_nn(const MatmulNnArgs& args, MatmulPrecision precision, ThreadPool& pool) {
  if (precision == MatmulPrecision::Bf16) {
    matmul_nn_bf16(args, pool);
  } else {
    matmul_nn(args, pool);
  }
}

}  // namespace s3::cpu
