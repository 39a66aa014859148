// The AMX matmul over a software model of the tile registers (compiled with the AVX512-BF16 flags,
// no AMX): matmul_amx_kernel.h run on eight 1 KiB arrays, with TDPBF16PS as the Intel SDM states it
// (vol. 2, "TDPBF16PS"): for each row m of A and column n of B, over the pairs k in increasing
// order, c += a[2k]·b[2k][n] then c += a[2k + 1]·b[2k + 1][n], each addition rounded to nearest
// even, BF16 subnormal inputs read as zero and subnormal results flushed to zero. Tests use it
// (kMatmulAmxModel, and kMatmulNnAmxModel for the trainer's products of matmul_nn_amx_kernel.h)
// to check the amx level's blocking, packing, tails and FP8 scaling on CPUs without AMX; where the
// CPU has AMX they also compare it with the hardware.
#include <cstring>

#include "cpu/matmul_amx_kernel.h"
#include "cpu/matmul_nn_amx_kernel.h"

namespace s3::cpu {
namespace {

inline float bf16_operand(uint16_t bits) {
  if ((bits & 0x7F80u) == 0) bits &= 0x8000u;  // denormals are zero
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

inline float flushed(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  if ((word & 0x7F800000u) == 0) word &= 0x80000000u;
  std::memcpy(&value, &word, 4);
  return value;
}

struct ModelTiles {
  alignas(64) uint8_t tile[8][kAmxRows * 64];

  void configure() { std::memset(tile, 0, sizeof(tile)); }
  template <int T>
  void zero() {
    std::memset(tile[T], 0, sizeof(tile[T]));
  }
  template <int T>
  void load(const void* p, int64_t stride_bytes) {
    for (int r = 0; r < kAmxRows; r++) std::memcpy(tile[T] + r * 64, static_cast<const uint8_t*>(p) + r * stride_bytes, 64);
  }
  template <int T>
  void store(void* p, int64_t stride_bytes) {
    for (int r = 0; r < kAmxRows; r++) std::memcpy(static_cast<uint8_t*>(p) + r * stride_bytes, tile[T] + r * 64, 64);
  }
  template <int C, int A, int B>
  void dot() {
    float c[kAmxRows][kAmxRows];
    uint16_t a[kAmxRows][kAmxK], b[kAmxK / 2][2 * kAmxRows];
    std::memcpy(c, tile[C], sizeof(c));
    std::memcpy(a, tile[A], sizeof(a));
    std::memcpy(b, tile[B], sizeof(b));
    for (int m = 0; m < kAmxRows; m++) {
      for (int k = 0; k < kAmxK / 2; k++) {
        for (int n = 0; n < kAmxRows; n++) {
          float sum = c[m][n];
          sum = flushed(sum + bf16_operand(a[m][2 * k]) * bf16_operand(b[k][2 * n]));
          sum = flushed(sum + bf16_operand(a[m][2 * k + 1]) * bf16_operand(b[k][2 * n + 1]));
          c[m][n] = sum;
        }
      }
    }
    std::memcpy(tile[C], c, sizeof(c));
  }
  void release() {}
};

void matmul_columns_amx_model(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin,
                              int64_t n_end, float* scratch) {
  amx_matmul_columns<ModelTiles>(out, input, w, M, n_begin, n_end, scratch);
}

void matmul_nn_bf16_columns_amx_model(const MatmulNnBf16Args& p, int64_t n_begin, int64_t n_end) {
  nn_amx_columns<ModelTiles>(p, n_begin, n_end);
}

}  // namespace

const MatmulNnBf16Kernels kMatmulNnAmxModel = {"amx-model",
                                               matmul_nn_bf16_columns_amx_model,
                                               matmul_nn_pack_pairs_avx512bf16,
                                               true,
                                               matmul_nn_pack_transposed_block_avx512bf16,
                                               matmul_nn_pack_rows_as_b_block_avx512bf16,
                                               matmul_nn_pack_rows_block_avx512bf16,
                                               matmul_nn_pack_pairs_into_tiles_avx512bf16,
                                               matmul_nn_transpose_a_tile_avx512bf16,
                                               matmul_nn_pair_tile_row_from_a_rows_avx512bf16};
const MatmulKernels kMatmulAmxModel = {"amx-model", true, matmul_columns_amx_model, true};

}  // namespace s3::cpu
