// The avx512bf16 level's peak probe: VDPBF16PS throughput from registers alone (compiled with the
// AVX-512 flags plus -mavx512bf16), beside the f32 FMA peak of machine_limits_avx512.cpp.
#include <immintrin.h>

#include "bench/machine_limits.h"

namespace s3::bench {
namespace {

inline __m512bh bf16_pairs(float value) {
  return _mm512_cvtne2ps_pbh(_mm512_set1_ps(value), _mm512_set1_ps(value));
}

// 16 independent VDPBF16PS chains in named registers (an array may be kept in memory) hide the
// instruction's latency; each adds 32 products a step. The sums grow by 2e-6 a step, so nothing
// overflows or goes subnormal in any run length used.
float bf16_dot_loop_avx512bf16(long iterations) {
  const __m512bh a = bf16_pairs(1e-3f), b = bf16_pairs(1e-3f);
  // Distinct starting values: identical chains would be merged into one by the compiler.
  __m512 a0 = _mm512_set1_ps(1.00f), a1 = _mm512_set1_ps(1.01f), a2 = _mm512_set1_ps(1.02f), a3 = _mm512_set1_ps(1.03f);
  __m512 a4 = _mm512_set1_ps(1.04f), a5 = _mm512_set1_ps(1.05f), a6 = _mm512_set1_ps(1.06f), a7 = _mm512_set1_ps(1.07f);
  __m512 a8 = _mm512_set1_ps(1.08f), a9 = _mm512_set1_ps(1.09f), a10 = _mm512_set1_ps(1.10f), a11 = _mm512_set1_ps(1.11f);
  __m512 a12 = _mm512_set1_ps(1.12f), a13 = _mm512_set1_ps(1.13f), a14 = _mm512_set1_ps(1.14f), a15 = _mm512_set1_ps(1.15f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm512_dpbf16_ps(a0, a, b), a1 = _mm512_dpbf16_ps(a1, a, b), a2 = _mm512_dpbf16_ps(a2, a, b);
    a3 = _mm512_dpbf16_ps(a3, a, b), a4 = _mm512_dpbf16_ps(a4, a, b), a5 = _mm512_dpbf16_ps(a5, a, b);
    a6 = _mm512_dpbf16_ps(a6, a, b), a7 = _mm512_dpbf16_ps(a7, a, b), a8 = _mm512_dpbf16_ps(a8, a, b);
    a9 = _mm512_dpbf16_ps(a9, a, b), a10 = _mm512_dpbf16_ps(a10, a, b), a11 = _mm512_dpbf16_ps(a11, a, b);
    a12 = _mm512_dpbf16_ps(a12, a, b), a13 = _mm512_dpbf16_ps(a13, a, b), a14 = _mm512_dpbf16_ps(a14, a, b);
    a15 = _mm512_dpbf16_ps(a15, a, b);
  }
  const __m512 s0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                  _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  const __m512 s1 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                                  _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

}  // namespace

// 16 chains × 16 lanes × 2 products × 2 flops per multiply-add.
const Bf16DotKernel kBf16DotAvx512Bf16 = {16 * 16 * 2 * 2, bf16_dot_loop_avx512bf16};

}  // namespace s3::bench
