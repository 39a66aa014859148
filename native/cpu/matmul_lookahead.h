// matmul_lookahead.h: the weight prefetch of the SIMD matmul kernels (matmul_avx2.cpp,
// matmul_avx512.cpp, matmul_avx512bf16.cpp). A weight tile's rows are short streams the hardware
// prefetcher follows poorly, so while a tile's first register tile of input rows computes it asks
// for the next weight tile's stored bytes into L2 (prefetcht1; FP8 tiles widened into scratch ask
// for the next tile's codes), a few lines per k step so the requests spread over that compute. Into
// L2 rather than L1: a burst of L1 prefetches holds the core's few L1 miss buffers (the same finding
// as attention's prefetch). Measured on the 0.6B decode matrices at M = 1 (AVX-512): +35% GB/s on
// 2 threads, +75% on one; prefetcht0 gained nothing. It was first limited to one register tile of
// input rows, on the reasoning that more rows make a tile compute-bound; on Zen 4 (avx512bf16, 2
// threads, the 0.6B shape; docs/benchmarks.md) prefetching at every M made a decode step of 8
// sequences 1.37x faster (median of 5 alternations), of 64 sequences 1.06x, and left a 512-token
// prefill as it was (1.00x). Prefetches change no arithmetic.
//
// Everything here has internal linkage: each SIMD file compiles its own copy with its own
// instruction set, and no copy can be the one the linker keeps for another file.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {
namespace {

// Kernels take it by const reference and copy it: passed by value, the 24-byte struct went through
// the stack at every register-tile call, and the 16-byte reload of two 8-byte stores missed store
// forwarding (about 2% of a prefill's matmul time on Zen 5).
struct Lookahead {
  const char* next = nullptr;
  const char* end = nullptr;
  int64_t lines_per_step = 0;
  void step() {
    for (int64_t i = 0; i < lines_per_step && next < end; i++, next += 64) __builtin_prefetch(next, 0, 2);
  }
};

// The lookahead of the tile of `tile_rows` weight rows at row n: the bytes of rows
// [n + tile_rows, min(n + 2·tile_rows, n_end)), spread over the tile's K / lanes k steps.
template <DType D>
Lookahead next_weight_tile(const MatrixView& view, int64_t n, int64_t n_end, int64_t tile_rows, int64_t lanes) {
  const int64_t left = n_end - n - tile_rows;
  const int64_t next_rows = left < tile_rows ? left : tile_rows;
  if (next_rows <= 0) return {};
  const int64_t row_bytes = view.cols * int64_t(dtype_size(D));
  const char* begin = static_cast<const char*>(view.data) + (n + tile_rows) * row_bytes;
  const char* aligned = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(begin) & ~uintptr_t(63));
  const int64_t lines = (begin + next_rows * row_bytes - aligned + 63) / 64;
  const int64_t steps = view.cols / lanes > 0 ? view.cols / lanes : 1;
  return {aligned, begin + next_rows * row_bytes, (lines + steps - 1) / steps};
}

}  // namespace
}  // namespace s3::cpu
