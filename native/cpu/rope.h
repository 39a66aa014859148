// rope.h: rotary position embedding as Qwen3 uses it: rotate-half (NeoX) pairing, where dimension
// j rotates with j + HD/2, not the interleaved (2i, 2i+1) pairing of the original RoPE/llm.c.
#pragma once

#include <cstdint>

namespace s3::cpu {

// cos, sin: [T × HD/2]; row t holds cos/sin of positions[t] · inv_freq[j] with
// inv_freq[j] = 1 / theta^(2j/HD), both the frequency and the angle computed in f32 as Hugging
// Face does (the cos/sin of that f32 angle are then exact to f32 rounding).
void rope_tables(float* cos, float* sin, const int64_t* positions, int64_t T, int64_t HD, float theta);

// x: [T × NH × HD], rotated in place; every head of token t uses row t of cos/sin:
// x'[j] = x[j]·cos_j − x[j+HD/2]·sin_j,  x'[j+HD/2] = x[j+HD/2]·cos_j + x[j]·sin_j.
void rope_forward(float* x, const float* cos, const float* sin, int64_t T, int64_t NH, int64_t HD);

}  // namespace s3::cpu
