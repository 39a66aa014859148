// fp8_quantize.h: `--weights fp8`: a model's linear-layer weights (q, k, v, o, gate, up, down of
// every layer) quantized to FP8 E4M3 with one f32 scale per 128 × 128 block, the layout of Qwen3's
// FP8 checkpoints (weight_scale_inv), so the rest of the system cannot tell the two apart. The
// embedding, the LM head and the norms stay as stored, as in those checkpoints.
#pragma once

#include <cstdint>

#include "model/qwen3_weights.h"

namespace s3::model {

// One block's quantization: scale = max |x| / 448 (1 for an all-zero block), bytes = fp8(x / scale)
// rounded to nearest even. w: [rows × cols] f32 row-major; bytes: [rows × cols];
// scales: [ceil(rows/128) × ceil(cols/128)] row-major.
void quantize_fp8_blockwise(const float* w, int64_t rows, int64_t cols, uint8_t* bytes, float* scales);

// A copy of `weights` with every linear-layer weight that is not FP8 yet quantized as above.
Qwen3Weights quantize_weights_fp8(const Qwen3Weights& weights);

}  // namespace s3::model
