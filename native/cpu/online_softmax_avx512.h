// online_softmax_avx512.h: the pieces of the online softmax the AVX-512 attention kernels share
// (attention_avx512.cpp with f32 products, attention_avx512bf16.cpp with BF16 products): lane
// masks, the vectorized e^x, and softmax_step, the f32 kernel's update of one row over a 16-key
// chunk (the BF16 kernel runs its own, with rows in lanes). Include only from files compiled with
// AVX-512 flags; internal linkage, as sum_lanes_avx512.h explains.
#pragma once

#include <immintrin.h>

#include <math.h>

#include <cstdint>

#include "cpu/sum_lanes_avx512.h"

namespace s3::cpu {
namespace {

constexpr int kSoftmaxLanes = 16;  // keys per chunk, one score per lane

inline float larger_of(float a, float b) { return a > b ? a : b; }

// The first `count` lanes (all 16 from 16 on; count ≥ 1).
inline __mmask16 lane_mask(int64_t count) {
  return count >= kSoftmaxLanes ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}

// e^x for x ≤ 0 (Cephes expf: x = n·ln2 + r, a degree-6 polynomial in r, then ·2^n), about 1 ulp.
inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.33654f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), x);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n);
}

// The online-softmax update of one row from its chunk scores: the running max and sum, and in p the
// weights exp(score − max) of the row's visible keys (0 past them); returns the factor the row's
// earlier output is scaled by.
inline float softmax_step(__m512 scores, int64_t seen, float& row_max, float& row_sum, float* p) {
  const __mmask16 seen_mask = lane_mask(seen);
  const __m512 visible_scores = _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), seen_mask, scores);
  const float new_max = larger_of(row_max, _mm512_reduce_max_ps(visible_scores));
  // e^0 is exactly 1: skip the call when the running max holds (most chunks).
  const float correction = new_max == row_max ? 1.0f : expf(row_max - new_max);
  const __m512 shifted = _mm512_sub_ps(visible_scores, _mm512_set1_ps(new_max));
  const __m512 weights = _mm512_maskz_mov_ps(seen_mask, exp_nonpositive(shifted));
  _mm512_store_ps(p, weights);
  row_sum = row_sum * correction + sum_lanes(weights);
  row_max = new_max;
  return correction;
}

}  // namespace
}  // namespace s3::cpu
