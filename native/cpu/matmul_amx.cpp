// AMX matmul: the amx level's kernels (compiled with the AVX512-BF16 flags plus -mamx-tile
// -mamx-bf16; called only after run-time detection and the kernel's grant of tile data,
// core/cpu_features.h). The kernel is matmul_amx_kernel.h over the hardware tiles (amx_tiles.h).
#include <immintrin.h>

#include "cpu/amx_tiles.h"
#include "cpu/matmul_amx_kernel.h"

namespace s3::cpu {
namespace {

void matmul_columns_amx(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin,
                        int64_t n_end, float* scratch) {
  amx_matmul_columns<HardwareTiles>(out, input, w, M, n_begin, n_end, scratch);
}

}  // namespace

const MatmulKernels kMatmulAmx = {"amx", true, matmul_columns_amx, true, false, 64};

}  // namespace s3::cpu
