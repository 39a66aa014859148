// Measuring the machine's FMA and BF16 dot-product peaks and read bandwidth; see machine_limits.h.
#include "bench/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace s3::bench {
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

// The best GFLOP/s of `repetitions` runs of `iterations` rounds of `loop` on every thread at once.
double peak_gflops(ThreadPool& pool, float (*loop)(long), int flops_per_iteration, int repetitions, std::vector<float>& sink,
                   long iterations = 20'000'000) {
  const size_t threads = pool.num_threads();
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(threads, [&](size_t begin, size_t end, size_t) {
      for (size_t t = begin; t < end; ++t) sink[t] += loop(iterations);
    });
    const double flops = double(iterations) * flops_per_iteration * double(threads);
    best = std::max(best, flops / seconds_since(start) / 1e9);
  }
  return best;
}

}  // namespace

const MachineLimitKernels kMachineLimitsScalar = {"scalar", 16, fma_loop_scalar, read_sum_scalar};

MachineLimits measure_machine_limits(ThreadPool& pool, size_t read_bytes, int repetitions) {
  const MachineLimitKernels& k = kernels_for_level(cpu_info().level);
  const size_t threads = pool.num_threads();
  MachineLimits limits;
  limits.simd = simd_level_name(cpu_info().level);
  std::vector<float> sink(threads);

  limits.fma_gflops = peak_gflops(pool, k.fma_loop, k.flops_per_iteration, repetitions, sink);
  if (cpu_info().level >= SimdLevel::Avx512Bf16) {
    limits.bf16_dot_gflops =
        peak_gflops(pool, kBf16DotAvx512Bf16.dot_loop, kBf16DotAvx512Bf16.flops_per_iteration, repetitions, sink);
  }
  // A round of four tile products is ~64 cycles, not ~8: fewer rounds for a run of similar length.
  if (cpu_info().level >= SimdLevel::Amx) {
    limits.amx_gflops = peak_gflops(pool, kAmxDot.dot_loop, kAmxDot.flops_per_iteration, repetitions, sink, 1'000'000);
    limits.amx_loaded_gflops = peak_gflops(pool, kAmxDot.loaded_dot_loop, kAmxDot.flops_per_iteration, repetitions, sink, 1'000'000);
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

}  // namespace s3::bench
