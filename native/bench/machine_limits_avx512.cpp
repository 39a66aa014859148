// AVX-512 kernels for measuring the machine's limits (compiled with -mavx512f).
#include <immintrin.h>

#include "bench/machine_limits.h"

namespace s3::bench {
namespace {

// 16 independent chains in named registers (an array may be kept in memory) hide the FMA latency.
float fma_loop_avx512(long iterations) {
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  // Distinct starting values: identical chains would be merged into one by the compiler.
  __m512 a0 = _mm512_set1_ps(1.00f), a1 = _mm512_set1_ps(1.01f), a2 = _mm512_set1_ps(1.02f), a3 = _mm512_set1_ps(1.03f);
  __m512 a4 = _mm512_set1_ps(1.04f), a5 = _mm512_set1_ps(1.05f), a6 = _mm512_set1_ps(1.06f), a7 = _mm512_set1_ps(1.07f);
  __m512 a8 = _mm512_set1_ps(1.08f), a9 = _mm512_set1_ps(1.09f), a10 = _mm512_set1_ps(1.10f), a11 = _mm512_set1_ps(1.11f);
  __m512 a12 = _mm512_set1_ps(1.12f), a13 = _mm512_set1_ps(1.13f), a14 = _mm512_set1_ps(1.14f), a15 = _mm512_set1_ps(1.15f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, m, c), a1 = _mm512_fmadd_ps(a1, m, c), a2 = _mm512_fmadd_ps(a2, m, c);
    a3 = _mm512_fmadd_ps(a3, m, c), a4 = _mm512_fmadd_ps(a4, m, c), a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c), a7 = _mm512_fmadd_ps(a7, m, c), a8 = _mm512_fmadd_ps(a8, m, c);
    a9 = _mm512_fmadd_ps(a9, m, c), a10 = _mm512_fmadd_ps(a10, m, c), a11 = _mm512_fmadd_ps(a11, m, c);
    a12 = _mm512_fmadd_ps(a12, m, c), a13 = _mm512_fmadd_ps(a13, m, c), a14 = _mm512_fmadd_ps(a14, m, c);
    a15 = _mm512_fmadd_ps(a15, m, c);
  }
  const __m512 s0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                  _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  const __m512 s1 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                                  _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

float read_sum_avx512(const float* data, size_t count) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(data + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(data + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_loadu_ps(data + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_loadu_ps(data + i + 48));
  }
  float total = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  for (; i < count; ++i) total += data[i];
  return total;
}

}  // namespace

const MachineLimitKernels kMachineLimitsAvx512 = {"avx512", 16 * 16 * 2, fma_loop_avx512, read_sum_avx512};

}  // namespace s3::bench
