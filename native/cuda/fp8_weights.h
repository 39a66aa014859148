// fp8_weights.h: `--weights fp8` made on the device from f32 weights (a trainer's parameters), the
// twin of model/fp8_quantize.h's quantize_fp8_blockwise and of the host upload's widening, bit for
// bit: each 128 × 128 block's scale is max |x| / 448 (1 for an all-zero block), its bytes
// f32_to_fp8e4m3(x / scale); widened, a byte becomes bf16(fp8e4m3_to_f32(byte) × scale). The
// arithmetic is core/dtype.h's, shared with the host. Device pointers. Not run on a GPU yet:
// compiled for sm_80 and sm_90a, and checked on the CPU in scripts/cuda-emulation (fp8-weights).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// w [rows × cols] f32 → bytes [rows × cols] and one scale per block at scales[rb × scale_stride + cb]
// (scale_stride ≥ ceil(cols / 128); entries past the last column block are set to 1, as the padded
// layout of ops::weight_scale_stride wants).
void quantize_fp8_blockwise(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales, int64_t scale_stride,
                            cudaStream_t stream);

// bytes [rows × cols] with block scales as above → out [rows × cols] bf16 bits.
void widen_fp8_blockwise_to_bf16(const uint8_t* bytes, const float* scales, int64_t scale_stride, int64_t rows, int64_t cols,
                                 uint16_t* out, cudaStream_t stream);

}  // namespace s3::cuda
