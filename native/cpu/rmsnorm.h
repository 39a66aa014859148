// rmsnorm.h: Qwen3's RMSNorm, used before attention and the MLP (over C), per head on q and k
// (over HD, one weight vector shared by every head) and before the LM head.
#pragma once

#include <cstdint>

namespace s3::cpu {

// out, inp: [N × C] row-major (out may equal inp); weight: [C].
// out[n][c] = weight[c] · (inp[n][c] · rsqrt(mean_c(inp[n]²) + eps)), in f32 with the sum of
// squares accumulated in double; no +1 offset on the weight.
void rmsnorm_forward(float* out, const float* inp, const float* weight, int64_t N, int64_t C, float eps);

}  // namespace s3::cpu
