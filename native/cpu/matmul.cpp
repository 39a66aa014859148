// The scalar matmul (the fallback for CPUs without AVX2), the per-level dispatch, the work items
// (blocks of rows × chunks of output columns) the threads claim, and the once-per-call BF16
// rounding of the input for the kernels that multiply in BF16; see matmul.h.
#include "cpu/matmul.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/aligned_allocator.h"
#include "cpu/convert.h"
#include "cpu/kernel_select.h"
#include "cpu/weight_panels.h"

namespace s3::cpu {
namespace {

// Four lanes in the same k-interleaved order the SIMD kernels use, so even this fallback keeps
// one fixed summation order per element.
constexpr int kScalarLanes = 4;

void matmul_columns_scalar(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin,
                           int64_t n_end, float* row) {
  const int64_t K = w.cols, N = w.rows;
  const float* inp = input.f32;
  for (int64_t n = n_begin; n < n_end; n++) {
    matrix_row_to_f32(w, n, row);
    for (int64_t m = 0; m < M; m++) {
      const float* x = inp + m * K;
      float lane[kScalarLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int64_t k = 0; k < K; k++) lane[k % kScalarLanes] += x[k] * row[k];
      out[m * N + n] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    }
  }
}

const MatmulKernels kMatmulScalar = {"scalar", false, matmul_columns_scalar};

int64_t padded_row(int64_t K) { return (K + kMatmulRowAlign - 1) / kMatmulRowAlign * kMatmulRowAlign; }

bool multiplies_in_bf16(DType dtype) { return dtype == DType::BF16 || dtype == DType::F8_E4M3; }

bool carries_panels(const MatrixView& w) {
  return (w.dtype == DType::BF16 && w.bf16_panels != nullptr) || (w.dtype == DType::F8_E4M3 && w.fp8_panels != nullptr);
}

// inp's rows rounded to BF16 (RNE) straight into the panel layout (matmul.h, MatmulInput::panels),
// zero rows and zero values past M and K: each row is rounded whole into a zero-padded row buffer,
// then its steps are copied to their places. Rounding is per element, so the pool's split of the
// panels (from kParallelRoundValues values on; below that the calling thread does all) changes no
// bit; it keeps the rounding of a prefill's M × K inputs off the critical path of one thread.
constexpr int64_t kParallelRoundValues = int64_t(1) << 16;

void round_rows_into_panels(const float* inp, int64_t M, int64_t K, int64_t stride, std::vector<uint16_t>& panels,
                            ThreadPool& pool) {
  const int64_t groups = (M + kMatmulPanelRows - 1) / kMatmulPanelRows, steps = stride / kMatmulRowAlign;
  panels.resize(size_t(groups * kMatmulPanelRows * stride));
  uint16_t* out = panels.data();
  const ConvertKernels& convert = convert_kernels();
  auto round_groups = [&](size_t begin, size_t end, size_t) {
    thread_local std::vector<uint16_t> row;
    row.assign(size_t(stride), 0);
    for (int64_t g = int64_t(begin); g < int64_t(end); g++) {
      for (int64_t r = 0; r < kMatmulPanelRows; r++) {
        const int64_t m = g * kMatmulPanelRows + r;
        if (m < M) {
          convert.f32_to_bf16(inp + m * K, row.data(), size_t(K));
        } else {
          std::fill(row.begin(), row.end(), uint16_t(0));
        }
        // A fixed-size memcpy is inlined as a few vector moves (std::copy_n compiled to a call to
        // memmove per 64 bytes: rounding 512 × 3,072 inputs took ~1.0 ms against ~0.85 ms now).
        for (int64_t s = 0; s < steps; s++) {
          std::memcpy(out + ((g * steps + s) * kMatmulPanelRows + r) * kMatmulRowAlign,
                      row.data() + s * kMatmulRowAlign, kMatmulRowAlign * sizeof(uint16_t));
        }
      }
    }
  };
  if (M * K >= kParallelRoundValues) {
    pool.parallel_for(size_t(groups), round_groups);
  } else {
    round_groups(0, size_t(groups), 0);
  }
}

// inp's rows rounded to BF16 (RNE) straight into AMX B tiles (matmul.h, MatmulInput::tiles): each
// group of 16 rows is rounded into a zero-padded buffer, then each step's 16 × 16 dwords (BF16
// pairs) are transposed into its tile; zero rows past M. Per group on the pool from
// kParallelRoundValues values on, as the panels are (rounding is per element: no bit depends on
// the split).
void round_rows_into_tiles(const float* inp, int64_t M, int64_t K, int64_t stride, CacheLineVector<uint32_t>& tiles,
                           ThreadPool& pool) {
  const int64_t groups = (M + kMatmulTileRows - 1) / kMatmulTileRows, steps = stride / kMatmulTileK;
  const int64_t pairs = kMatmulTileK / 2, tile_dwords = kMatmulTileRows * pairs;
  tiles.resize(size_t(groups * steps * tile_dwords));
  const ConvertKernels& convert = convert_kernels();
  auto round_groups = [&](size_t begin, size_t end, size_t) {
    thread_local std::vector<uint32_t> rows;  // 16 rounded rows, stride / 2 dwords each
    rows.assign(size_t(kMatmulTileRows * stride / 2), 0);
    for (int64_t g = int64_t(begin); g < int64_t(end); g++) {
      for (int64_t j = 0; j < kMatmulTileRows; j++) {
        uint16_t* row = reinterpret_cast<uint16_t*>(rows.data() + j * stride / 2);
        const int64_t m = g * kMatmulTileRows + j;
        if (m < M) {
          convert.f32_to_bf16(inp + m * K, row, size_t(K));
          std::fill(row + K, row + stride, uint16_t(0));
        } else {
          std::fill(row, row + stride, uint16_t(0));
        }
      }
      for (int64_t s = 0; s < steps; s++) {
        uint32_t* tile = tiles.data() + (g * steps + s) * tile_dwords;
        for (int64_t r = 0; r < pairs; r++) {
          for (int64_t j = 0; j < kMatmulTileRows; j++) tile[r * kMatmulTileRows + j] = rows[size_t(j * stride / 2 + s * pairs + r)];
        }
      }
    }
  };
  if (M * K >= kParallelRoundValues) {
    pool.parallel_for(size_t(groups), round_groups);
  } else {
    round_groups(0, size_t(groups), 0);
  }
}

// Output columns per work item (a multiple of it for decode-sized inputs): whole register tiles of
// every level (4, 6, 3 and 16 columns), few enough that a thread that runs slower (a busy or
// smaller core) leaves its share to the others.
constexpr int64_t kColumnsPerChunk = 3 * kMatmulTileRows;
// Weights one fused pass takes (q/k/v is the most the model needs).
constexpr int64_t kMaxMatmulOutputs = 4;

}  // namespace

int64_t matmul_panel_block_rows(int64_t bf16_stride, int64_t M) {
  const int64_t panel_bytes = bf16_stride * kMatmulPanelRows * int64_t(sizeof(uint16_t));
  const int64_t most = std::max<int64_t>(1, kMatmulPanelBlockBytes / panel_bytes);
  const int64_t panels = (M + kMatmulPanelRows - 1) / kMatmulPanelRows, blocks = (panels + most - 1) / most;
  return (panels + blocks - 1) / blocks * kMatmulPanelRows;
}

int64_t matmul_tile_block_rows(int64_t bf16_stride, int64_t M) {
  const int64_t group_bytes = bf16_stride * int64_t(sizeof(uint16_t)) * kMatmulTileRows;
  const int64_t most = std::max<int64_t>(1, kMatmulTileBlockBytes / group_bytes);
  const int64_t groups = (M + kMatmulTileRows - 1) / kMatmulTileRows, blocks = (groups + most - 1) / most;
  return (groups + blocks - 1) / blocks * kMatmulTileRows;
}

void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels) {
  if (M <= 0) return;
  if (count > kMaxMatmulOutputs) {
    throw std::invalid_argument("matmul_forward: " + std::to_string(count) + " weights in one pass; at most " +
                                std::to_string(kMaxMatmulOutputs));
  }
  // first_chunk[i]: where matrix i's column chunks start in the stacked order.
  int64_t first_chunk[kMaxMatmulOutputs + 1] = {0};
  int64_t K = 0;
  // Prefill-sized inputs (compute-bound) go in small chunks, so a slower core takes fewer; a
  // decode-sized input (bound by streaming the weights, each kernel prefetching its next tile
  // within its chunk) in one contiguous run per thread, claimed all the same.
  int64_t total_columns = 0;
  bool all_panels = kernels.reads_weight_panels;
  for (int64_t i = 0; i < count; i++) {
    total_columns += outputs[i].w->rows;
    all_panels = all_panels && carries_panels(*outputs[i].w);
  }
  const int64_t per_thread = (total_columns + int64_t(pool.num_threads()) - 1) / int64_t(pool.num_threads());
  // Weight panels go a whole panel (one register tile's columns) per chunk.
  const int64_t chunk_unit = all_panels ? kWeightPanelColumns : kColumnsPerChunk;
  const int64_t prefill_chunk = all_panels ? kWeightPanelColumns : kernels.prefill_chunk_columns;
  const int64_t columns_per_chunk =
      M >= kMatmulTileRows ? prefill_chunk : (per_thread + chunk_unit - 1) / chunk_unit * chunk_unit;
  for (int64_t i = 0; i < count; i++) {
    first_chunk[i + 1] = first_chunk[i] + (outputs[i].w->rows + columns_per_chunk - 1) / columns_per_chunk;
    K = std::max(K, outputs[i].w->cols);
  }
  const int64_t chunks = first_chunk[count];
  if (chunks == 0) return;
  MatmulInput input{inp, 0};
  bool any_bf16_weight = false;
  for (int64_t i = 0; i < count; i++) any_bf16_weight = any_bf16_weight || multiplies_in_bf16(outputs[i].w->dtype);
  // The calling thread's copy: the pass below only reads it, and returns before the next call.
  thread_local std::vector<uint16_t> rounded;
  thread_local CacheLineVector<uint32_t> tiles;
  if (kernels.rounds_input_to_bf16 && any_bf16_weight && kernels.packs_input_into_panels) {
    input.bf16_stride = padded_row(K);
    round_rows_into_panels(inp, M, K, input.bf16_stride, rounded, pool);
    input.panels = rounded.data();
  } else if (kernels.rounds_input_to_bf16 && any_bf16_weight && kernels.packs_input_into_tiles) {
    input.bf16_stride = padded_row(K);
    round_rows_into_tiles(inp, M, K, input.bf16_stride, tiles, pool);
    input.tiles = tiles.data();
  }
  // Work items (block of input rows, chunk of one weight's output columns), block-major, claimed by
  // whichever thread is free: every thread works on the same block of rows at a time, so a block of
  // panels (or input tiles) stays in each core's L2 while the weights stream past it. Each output
  // element is computed the same whatever its item or thread (its order depends only on K), so the
  // bits do not depend on the claiming.
  // Weight panels take every row in one block: a panel (64 columns × K) stays in L2 while the
  // rows' broadcasts stream past it, so each weight is read from memory once per call.
  const int64_t rows_per_block = all_panels                ? M
                                 : input.panels != nullptr  ? matmul_panel_block_rows(input.bf16_stride, M)
                                 : input.tiles != nullptr ? matmul_tile_block_rows(input.bf16_stride, M)
                                                          : M;
  const int64_t blocks = (M + rows_per_block - 1) / rows_per_block;
  pool.parallel_claim(size_t(blocks * chunks), [&](size_t item, size_t) {
    // Allocated here, in baseline code: a std::vector instantiated in an AVX-512 file could be the
    // copy the linker keeps for everyone, and fault on CPUs without AVX-512.
    thread_local CacheLineVector<float> scratch;  // the amx level packs weight tiles into it
    scratch.resize(size_t(std::max(kMatmulScratchRows * padded_row(K), kMatmulScratchMinFloats)));
    const int64_t block = int64_t(item) / chunks, chunk = int64_t(item) % chunks;
    int64_t i = 0;
    while (chunk >= first_chunk[i + 1]) i++;
    const MatrixView& w = *outputs[i].w;
    const int64_t n_begin = (chunk - first_chunk[i]) * columns_per_chunk;
    const int64_t n_end = std::min(w.rows, n_begin + columns_per_chunk);
    const int64_t m_begin = block * rows_per_block, m_end = std::min(M, m_begin + rows_per_block);
    MatmulInput rows = input;  // the block's rows (blocks > 1 only with panels or tiles, in whole panels or groups)
    rows.f32 = input.f32 + m_begin * w.cols;
    if (input.panels != nullptr) rows.panels = input.panels + m_begin * input.bf16_stride;
    if (input.tiles != nullptr) {
      const int64_t group_dwords = (input.bf16_stride / kMatmulTileK) * kMatmulTileRows * (kMatmulTileK / 2);
      rows.tiles = input.tiles + (m_begin / kMatmulTileRows) * group_dwords;
    }
    kernels.columns(outputs[i].out + m_begin * w.rows, rows, w, m_end - m_begin, n_begin, n_end, scratch.data());
  });
}

void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool) {
  matmul_forward(outputs, count, inp, M, pool, matmul_kernels());
}

void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels) {
  const MatmulOutput output{out, &w};
  matmul_forward(&output, 1, inp, M, pool, kernels);
}

void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool) {
  matmul_forward(out, inp, w, M, pool, matmul_kernels());
}

const MatmulKernels* matmul_kernels_for(SimdLevel level) {
  return select_kernels<MatmulKernels>({&kMatmulScalar, &kMatmulAvx2, &kMatmulAvx512, &kMatmulAvx512Bf16, &kMatmulAmx}, level);
}

const MatmulKernels& matmul_kernels() {
  static const MatmulKernels& chosen = *matmul_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
