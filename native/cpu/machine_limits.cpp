// Measuring the machine's FMA peak and read bandwidth; see machine_limits.h.
#include "cpu/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace s3::cpu {
namespace {

float fma_loop_scalar(long iterations) {
  float a[8] = {1.00f, 1.01f, 1.02f, 1.03f, 1.04f, 1.05f, 1.06f, 1.07f};  // distinct, so chains are not merged
  const float m = 0.999999f, c = 1e-7f;
  for (long i = 0; i < iterations; ++i) {
    for (float& x : a) x = x * m + c;
  }
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

float read_sum_scalar(const float* data, size_t count) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    s0 += data[i];
    s1 += data[i + 1];
    s2 += data[i + 2];
    s3 += data[i + 3];
  }
  for (; i < count; ++i) s0 += data[i];
  return s0 + s1 + s2 + s3;
}

const MachineLimitKernels& kernels_for_level(SimdLevel level) {
  if (level >= SimdLevel::Avx512) return kMachineLimitsAvx512;
  if (level >= SimdLevel::Avx2) return kMachineLimitsAvx2;
  return kMachineLimitsScalar;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const MachineLimitKernels kMachineLimitsScalar = {"scalar", 16, fma_loop_scalar, read_sum_scalar};

MachineLimits measure_machine_limits(ThreadPool& pool, size_t read_bytes, int repetitions) {
  const MachineLimitKernels& k = kernels_for_level(cpu_info().level);
  const size_t threads = pool.num_threads();
  MachineLimits limits;
  limits.simd = k.name;
  std::vector<float> sink(threads);

  const long iterations = 20'000'000;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(threads, [&](size_t begin, size_t end, size_t) {
      for (size_t t = begin; t < end; ++t) sink[t] += k.fma_loop(iterations);
    });
    const double flops = double(iterations) * k.flops_per_iteration * double(threads);
    limits.fma_gflops = std::max(limits.fma_gflops, flops / seconds_since(start) / 1e9);
  }

  const size_t count = read_bytes / sizeof(float);
  std::vector<float> buffer(count);
  pool.parallel_for(count, [&](size_t begin, size_t end, size_t) {
    std::fill(buffer.begin() + long(begin), buffer.begin() + long(end), 1.0f);  // first touch by the reader
  });
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(count, [&](size_t begin, size_t end, size_t t) { sink[t] += k.read_sum(buffer.data() + begin, end - begin); });
    limits.read_gbytes_per_s = std::max(limits.read_gbytes_per_s, double(read_bytes) / seconds_since(start) / 1e9);
  }
  volatile float keep = 0;
  for (float s : sink) keep = keep + s;
  return limits;
}

}  // namespace s3::cpu
