// The amx level's peak probes (compiled with the AMX flags), beside the VDPBF16PS peak of
// machine_limits_avx512bf16.cpp. Four accumulator tiles (the matmul kernels' 2 × 2 block,
// cpu/amx_tiles.h) take products of two A and two B tiles: loaded once (the tile unit alone), or
// reloaded every round from a buffer that stays in L1, as the kernels' inner loop reloads them for
// each step of k. The second is the ceiling those kernels can reach with their operands in L1; on a
// shared host it can fall far below the first (the tile loads wait on the products that read the
// same tiles, and a busy sibling hyperthread stretches that wait).
#include <cstdint>
#include <cstring>

#include "bench/machine_limits.h"
#include "cpu/amx_tiles.h"

namespace s3::bench {
namespace {

// 16 × 32 bf16 values of 1e-3 (0x3A83): every product adds ~1e-6 × 32 to an accumulator a step,
// so nothing overflows or goes subnormal in any run length used.
constexpr uint16_t kSmallBf16 = 0x3A83;

// The four accumulator tiles stored and released: a value derived from them, so the rounds cannot
// be optimized away.
float stored_sum(cpu::HardwareTiles& tiles) {
  alignas(64) float c[4][16 * 16];
  tiles.store<0>(c[0], 64);
  tiles.store<1>(c[1], 64);
  tiles.store<2>(c[2], 64);
  tiles.store<3>(c[3], 64);
  tiles.release();
  return c[0][0] + c[1][17] + c[2][34] + c[3][255];
}

float amx_dot_loop(long iterations) {
  alignas(64) uint16_t operand[16 * 32];
  for (uint16_t& v : operand) v = kSmallBf16;
  cpu::HardwareTiles tiles;
  tiles.configure();
  tiles.load<4>(operand, 64);
  tiles.load<5>(operand, 64);
  tiles.load<6>(operand, 64);
  tiles.load<7>(operand, 64);
  tiles.zero<0>();
  tiles.zero<1>();
  tiles.zero<2>();
  tiles.zero<3>();
  for (long i = 0; i < iterations; ++i) {
    tiles.dot<0, 4, 6>();
    tiles.dot<1, 4, 7>();
    tiles.dot<2, 5, 6>();
    tiles.dot<3, 5, 7>();
  }
  return stored_sum(tiles);
}

// The same rounds, each first loading its two A and two B tiles from one of four sets of operand
// tiles (16 KiB in all, so they stay in L1).
float amx_loaded_dot_loop(long iterations) {
  alignas(64) uint16_t operands[4][4][16 * 32];
  for (auto& set : operands) {
    for (auto& tile : set) {
      for (uint16_t& v : tile) v = kSmallBf16;
    }
  }
  cpu::HardwareTiles tiles;
  tiles.configure();
  tiles.zero<0>();
  tiles.zero<1>();
  tiles.zero<2>();
  tiles.zero<3>();
  for (long i = 0; i < iterations; ++i) {
    const auto& set = operands[i & 3];
    tiles.load<4>(set[0], 64);
    tiles.load<5>(set[1], 64);
    tiles.load<6>(set[2], 64);
    tiles.load<7>(set[3], 64);
    tiles.dot<0, 4, 6>();
    tiles.dot<1, 4, 7>();
    tiles.dot<2, 5, 6>();
    tiles.dot<3, 5, 7>();
  }
  return stored_sum(tiles);
}

}  // namespace

// 4 tiles × 16 rows × 16 columns × 32 products × 2 flops per multiply-add.
const AmxDotKernel kAmxDot = {4 * 16 * 16 * 32 * 2, amx_dot_loop, amx_loaded_dot_loop};

}  // namespace s3::bench
