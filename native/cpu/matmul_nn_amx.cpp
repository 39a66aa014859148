// AMX C (+)= A·B of the trainer's BF16 products (matmul_nn_bf16.h; compiled with the AVX512-BF16
// flags plus -mamx-tile -mamx-bf16, called only after run-time detection and the kernel's grant of
// tile data): matmul_nn_amx_kernel.h over the hardware tiles (amx_tiles.h).
#include "cpu/amx_tiles.h"
#include "cpu/matmul_nn_amx_kernel.h"

namespace s3::cpu {
namespace {

void matmul_nn_bf16_columns_amx(const MatmulNnBf16Args& p, int64_t n_begin, int64_t n_end) {
  nn_amx_columns<HardwareTiles>(p, n_begin, n_end);
}

}  // namespace

const MatmulNnBf16Kernels kMatmulNnAmx = {"amx",
                                          matmul_nn_bf16_columns_amx,
                                          matmul_nn_pack_pairs_avx512bf16,
                                          true,
                                          matmul_nn_pack_transposed_block_avx512bf16,
                                          matmul_nn_pack_rows_as_b_block_avx512bf16,
                                          matmul_nn_pack_rows_block_avx512bf16,
                                          matmul_nn_pack_pairs_into_tiles_avx512bf16,
                                          matmul_nn_transpose_a_tile_avx512bf16,
                                          matmul_nn_pair_tile_row_from_a_rows_avx512bf16};

}  // namespace s3::cpu
