// 1 × 128 FP8 quantization of GEMM inputs; see fp8_activations.h.
#include "core/ops/fp8_block_scales.h"
#include "core/ops/fp8_rows.h"
#include "cuda/check.h"
#include "cuda/fp8_activations.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kWarps = 8;

// One warp per (row, 128-column group); rows past T are zero with scale 1.
__global__ void quantize_kernel(uint8_t* out, float* scales, const float* in, int64_t T, int64_t T_padded, int64_t K) {
  const int64_t groups = ops::fp8_blocks(K);
  const int64_t item = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (item >= T_padded * groups) return;
  const int64_t t = item / groups, kb = item % groups;
  const int64_t begin = kb * ops::kFp8Block, end = min(K, begin + ops::kFp8Block);
  float max_abs = 0.0f;
  bool finite = true;
  if (t < T) {
    for (int64_t k = begin + lane; k < end; k += 32) {
      const float x = in[t * K + k];
      finite = finite && isfinite(x);
      max_abs = fmaxf(max_abs, fabsf(x));
    }
  }
  max_abs = warp_max(max_abs);
  finite = __all_sync(kFullMask, finite);
  const float scale = ops::fp8_row_scale(max_abs, finite);
  for (int64_t k = begin + lane; k < end; k += 32) out[t * K + k] = t < T ? ops::fp8_row_encode(in[t * K + k], scale, finite) : uint8_t(0);
  if (lane == 0) scales[ops::activation_scale_index(t, kb, T_padded)] = scale;
}

}  // namespace

void quantize_fp8_activations(uint8_t* out, float* scales, const float* in, int64_t T, int64_t K, cudaStream_t stream) {
  const int64_t T_padded = ops::fp8_activation_rows(T), items = T_padded * ops::fp8_blocks(K);
  if (items == 0) return;
  quantize_kernel<<<blocks_for(items, kWarps), 32 * kWarps, 0, stream>>>(out, scales, in, T, T_padded, K);
  check_launch("quantize_fp8_activations", {{"T", T}, {"K", K}});
}

}  // namespace s3::cuda
