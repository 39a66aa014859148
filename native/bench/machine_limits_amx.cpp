// The amx level's peak probe: TDPBF16PS throughput from tile registers alone (compiled with the
// AMX flags), beside the VDPBF16PS peak of machine_limits_avx512bf16.cpp. Four accumulator tiles
// (the matmul kernel's 2 × 2 block, cpu/amx_tiles.h) take products of two A and two B tiles
// loaded once, so nothing but the tile unit is timed.
#include <cstdint>
#include <cstring>

#include "bench/machine_limits.h"
#include "cpu/amx_tiles.h"

namespace s3::bench {
namespace {

// 16 × 32 bf16 values of 1e-3 (0x3A83): every product adds ~1e-6 × 32 to an accumulator a step,
// so nothing overflows or goes subnormal in any run length used.
constexpr uint16_t kSmallBf16 = 0x3A83;

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
  alignas(64) float c[4][16 * 16];
  tiles.store<0>(c[0], 64);
  tiles.store<1>(c[1], 64);
  tiles.store<2>(c[2], 64);
  tiles.store<3>(c[3], 64);
  tiles.release();
  return c[0][0] + c[1][17] + c[2][34] + c[3][255];
}

}  // namespace

// 4 tiles × 16 rows × 16 columns × 32 products × 2 flops per multiply-add.
const AmxDotKernel kAmxDot = {4 * 16 * 16 * 32 * 2, amx_dot_loop};

}  // namespace s3::bench
