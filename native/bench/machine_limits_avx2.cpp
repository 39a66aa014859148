// AVX2 kernels for measuring the machine's limits (compiled with -mavx2 -mfma).
#include <immintrin.h>

#include "bench/machine_limits.h"

namespace s3::bench {
namespace {

// 12 independent chains in named registers (an array may be kept in memory) hide the FMA latency.
float fma_loop_avx2(long iterations) {
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  // Distinct starting values: identical chains would be merged into one by the compiler.
  __m256 a0 = _mm256_set1_ps(1.00f), a1 = _mm256_set1_ps(1.01f), a2 = _mm256_set1_ps(1.02f), a3 = _mm256_set1_ps(1.03f);
  __m256 a4 = _mm256_set1_ps(1.04f), a5 = _mm256_set1_ps(1.05f), a6 = _mm256_set1_ps(1.06f), a7 = _mm256_set1_ps(1.07f);
  __m256 a8 = _mm256_set1_ps(1.08f), a9 = _mm256_set1_ps(1.09f), a10 = _mm256_set1_ps(1.10f), a11 = _mm256_set1_ps(1.11f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, c), a1 = _mm256_fmadd_ps(a1, m, c), a2 = _mm256_fmadd_ps(a2, m, c);
    a3 = _mm256_fmadd_ps(a3, m, c), a4 = _mm256_fmadd_ps(a4, m, c), a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c), a7 = _mm256_fmadd_ps(a7, m, c), a8 = _mm256_fmadd_ps(a8, m, c);
    a9 = _mm256_fmadd_ps(a9, m, c), a10 = _mm256_fmadd_ps(a10, m, c), a11 = _mm256_fmadd_ps(a11, m, c);
  }
  const __m256 s0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)), _mm256_add_ps(a4, a5));
  const __m256 s1 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9)), _mm256_add_ps(a10, a11));
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(s0, s1));
  return lanes[0] + lanes[7];
}

float read_sum_avx2(const float* data, size_t count) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(data + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(data + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(data + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(data + i + 24));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  float total = 0;
  for (float x : lanes) total += x;
  for (; i < count; ++i) total += data[i];
  return total;
}

}  // namespace

const MachineLimitKernels kMachineLimitsAvx2 = {"avx2", 12 * 8 * 2, fma_loop_avx2, read_sum_avx2};

}  // namespace s3::bench
