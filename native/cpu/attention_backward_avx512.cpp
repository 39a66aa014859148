// AVX-512 rows of the training attention (see attention_backward_rows.h; compiled with
// -mavx512f/bw/vl/dq, called only after run-time detection).
#include <immintrin.h>

#include "cpu/attention_backward_rows.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
constexpr int kLanes = 16;

inline __mmask16 lane_mask(int64_t count) {
  return count >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}

// e^x: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-7 polynomial, then scalef by 2^n (exact).
inline __m512 exp_ps(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));  // e^-104 underflows to 0 either way
  x = _mm512_min_ps(x, _mm512_set1_ps(88.7f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

float softmax_exp_avx512(float* row, int64_t n, float scale, float* max_out) {
  const __m512 vscale = _mm512_set1_ps(scale);
  __m512 vmax = _mm512_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lane_mask(n - j);
    vmax = _mm512_mask_max_ps(vmax, m, vmax, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), vscale));
  }
  const float max = _mm512_reduce_max_ps(vmax);
  const __m512 vm = _mm512_set1_ps(max);
  __m512 total = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lane_mask(n - j);
    const __m512 e = exp_ps(_mm512_fmsub_ps(_mm512_maskz_loadu_ps(m, row + j), vscale, vm));
    _mm512_mask_storeu_ps(row + j, m, e);
    total = _mm512_mask_add_ps(total, m, total, e);
  }
  *max_out = max;
  // A fixed tree over the lanes (the order _mm512_reduce_add_ps uses is not promised).
  const __m256 half = _mm256_add_ps(_mm512_extractf32x8_ps(total, 0), _mm512_extractf32x8_ps(total, 1));
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

void probs_and_grad_avx512(float* p, float* ds, int64_t n, float scale, float lse, float delta) {
  const __m512 vscale = _mm512_set1_ps(scale), vlse = _mm512_set1_ps(lse), vdelta = _mm512_set1_ps(delta);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lane_mask(n - j);
    const __m512 e = exp_ps(_mm512_fmsub_ps(_mm512_maskz_loadu_ps(m, p + j), vscale, vlse));
    _mm512_mask_storeu_ps(p + j, m, e);
    const __m512 g = _mm512_mul_ps(_mm512_mul_ps(e, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, ds + j), vdelta)), vscale);
    _mm512_mask_storeu_ps(ds + j, m, g);
  }
}

}  // namespace

const AttentionRowKernels kAttentionRowsAvx512 = {"avx512", softmax_exp_avx512, probs_and_grad_avx512};

}  // namespace s3::cpu
