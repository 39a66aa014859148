// AVX2 rows of the training attention (see attention_backward_rows.h; compiled with -mavx2 -mfma,
// called only after run-time detection).
#include <immintrin.h>

#include "cpu/attention_backward_rows.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions (see matmul_avx512.cpp).
constexpr int kLanes = 8;

inline __m256i lane_mask(int64_t count) {
  const int active = count >= kLanes ? kLanes : int(count);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(active), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// e^x: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-7 polynomial, times 2^n built in the exponent
// bits; x below −87 (where 2^n would leave the normal range) gives 0.
inline __m256 exp_ps(__m256 x) {
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

float softmax_exp_avx2(float* row, int64_t n, float scale, float* max_out) {
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256 vmax = _mm256_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < n; j += kLanes) {
    const __m256i m = lane_mask(n - j);
    const __m256 x = _mm256_mul_ps(_mm256_maskload_ps(row + j, m), vscale);
    vmax = _mm256_blendv_ps(vmax, _mm256_max_ps(vmax, x), _mm256_castsi256_ps(m));
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  const float max = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
  const __m256 vm = _mm256_set1_ps(max);
  __m256 total = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; j += kLanes) {
    const __m256i m = lane_mask(n - j);
    const __m256 e = _mm256_and_ps(exp_ps(_mm256_fmsub_ps(_mm256_maskload_ps(row + j, m), vscale, vm)), _mm256_castsi256_ps(m));
    _mm256_maskstore_ps(row + j, m, e);
    total = _mm256_add_ps(total, e);
  }
  *max_out = max;
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(total), _mm256_extractf128_ps(total, 1));
  const __m128 pair = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

void probs_and_grad_avx2(float* p, float* ds, int64_t n, float scale, float lse, float delta) {
  const __m256 vscale = _mm256_set1_ps(scale), vlse = _mm256_set1_ps(lse), vdelta = _mm256_set1_ps(delta);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __m256i m = lane_mask(n - j);
    const __m256 e = exp_ps(_mm256_fmsub_ps(_mm256_maskload_ps(p + j, m), vscale, vlse));
    _mm256_maskstore_ps(p + j, m, e);
    const __m256 g = _mm256_mul_ps(_mm256_mul_ps(e, _mm256_sub_ps(_mm256_maskload_ps(ds + j, m), vdelta)), vscale);
    _mm256_maskstore_ps(ds + j, m, g);
  }
}

}  // namespace

const AttentionRowKernels kAttentionRowsAvx2 = {"avx2", softmax_exp_avx2, probs_and_grad_avx2};

}  // namespace s3::cpu
