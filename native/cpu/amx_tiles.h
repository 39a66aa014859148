// amx_tiles.h: the AMX tile registers as the AMX kernels use them (matmul_amx.cpp, and the peak
// probe machine_limits_amx.cpp): every tile configured 16 rows × 64 bytes, and the tile operations
// as template members over tile numbers, the interface matmul_amx_kernel.h is written against.
// Include only from files compiled with -mamx-tile -mamx-bf16; internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace s3::cpu {
namespace {

// Palette 1, every tile 16 rows × 64 bytes: the layout of the tile configuration operand (Intel
// SDM vol. 1, "Tile Configuration"): palette, start row, 14 reserved bytes, 16 × colsb (u16),
// 16 × rows (u8).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "the tile configuration operand is 64 bytes");

// GCC's tile intrinsics are macros that paste their tile number into the assembly text, so each
// tile number is spelled out: T is a template argument, never a name the assembler would see.
#define S3_EACH_TILE(STATEMENT)                       \
  if constexpr (T == 0) STATEMENT(0);                 \
  else if constexpr (T == 1) STATEMENT(1);            \
  else if constexpr (T == 2) STATEMENT(2);            \
  else if constexpr (T == 3) STATEMENT(3);            \
  else if constexpr (T == 4) STATEMENT(4);            \
  else if constexpr (T == 5) STATEMENT(5);            \
  else if constexpr (T == 6) STATEMENT(6);            \
  else STATEMENT(7);

struct HardwareTiles {
  void configure() {
    TileConfig config;
    for (int i = 0; i < 8; i++) config.colsb[i] = 64, config.rows[i] = uint8_t(16);
    _tile_loadconfig(&config);
  }
  template <int T>
  void zero() {
#define S3_ZERO(t) _tile_zero(t)
    S3_EACH_TILE(S3_ZERO)
#undef S3_ZERO
  }
  template <int T>
  void load(const void* p, int64_t stride_bytes) {
#define S3_LOAD(t) _tile_loadd(t, p, stride_bytes)
    S3_EACH_TILE(S3_LOAD)
#undef S3_LOAD
  }
  template <int T>
  void store(void* p, int64_t stride_bytes) {
#define S3_STORE(t) _tile_stored(t, p, stride_bytes)
    S3_EACH_TILE(S3_STORE)
#undef S3_STORE
  }
  // The four products of the kernel's 2 × 2 block (matmul_amx_kernel.h).
  template <int C, int A, int B>
  void dot() {
    static_assert((C == 0 && A == 4 && B == 6) || (C == 1 && A == 4 && B == 7) || (C == 2 && A == 5 && B == 6) ||
                      (C == 3 && A == 5 && B == 7),
                  "the kernel's C = A · B tile triples");
    if constexpr (C == 0) _tile_dpbf16ps(0, 4, 6);
    else if constexpr (C == 1) _tile_dpbf16ps(1, 4, 7);
    else if constexpr (C == 2) _tile_dpbf16ps(2, 5, 6);
    else _tile_dpbf16ps(3, 5, 7);
  }
  void release() { _tile_release(); }
};
#undef S3_EACH_TILE

}  // namespace
}  // namespace s3::cpu
