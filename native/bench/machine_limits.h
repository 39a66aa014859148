// machine_limits.h: this machine's own ceilings, measured in the same run as a benchmark so its
// figures can be reported as a fraction of what the hardware can do: peak f32 FMA throughput
// (a register-only kernel, no memory traffic), at the avx512bf16 level also the peak BF16
// dot-product (VDPBF16PS) throughput the BF16 matmuls run at, at the amx level also the AMX tile
// (TDPBF16PS) peak from tile registers and with the tiles reloaded from L1 each round (the tile
// kernels' inner loop), and sustained read bandwidth (a STREAM-like sum over a buffer far larger than
// the caches). All use every thread of the pool.
#pragma once
#include <cstddef>

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace s3::bench {

struct MachineLimits {
  double fma_gflops = 0;         // best of the repetitions, f32, all threads
  double bf16_dot_gflops = 0;    // the same for VDPBF16PS (2 flops per product); 0 below the avx512bf16 level
  double amx_gflops = 0;         // the same for AMX tiles (TDPBF16PS); 0 below the amx level
  double amx_loaded_gflops = 0;  // the same with the operand tiles reloaded from L1 every round; 0 below the amx level
  double read_gbytes_per_s = 0;  // best of the repetitions, all threads
  const char* simd = "";         // the run-time SIMD level (cpu_info().level) the kernels ran at
};

// One implementation per SIMD level: `iterations` rounds of independent FMA chains (returns a
// value derived from the accumulators so the work cannot be optimized away), and a sum over
// `count` floats.
struct MachineLimitKernels {
  const char* name;
  int flops_per_iteration;
  float (*fma_loop)(long iterations);
  float (*read_sum)(const float* data, size_t count);
};

extern const MachineLimitKernels kMachineLimitsScalar;
extern const MachineLimitKernels kMachineLimitsAvx2;
extern const MachineLimitKernels kMachineLimitsAvx512;

// The BF16 dot-product probe of the avx512bf16 level (machine_limits_avx512bf16.cpp): `iterations`
// rounds of independent VDPBF16PS chains, returning a value derived from the accumulators.
struct Bf16DotKernel {
  int flops_per_iteration;
  float (*dot_loop)(long iterations);
};
extern const Bf16DotKernel kBf16DotAvx512Bf16;

// The tile probes of the amx level (machine_limits_amx.cpp): `iterations` rounds of TDPBF16PS into
// four accumulator tiles, returning a value derived from them; dot_loop on operand tiles loaded
// once, loaded_dot_loop reloading its four operand tiles from L1 every round.
struct AmxDotKernel {
  int flops_per_iteration;
  float (*dot_loop)(long iterations);
  float (*loaded_dot_loop)(long iterations);
};
extern const AmxDotKernel kAmxDot;

// Measures the limits with the kernels of the run-time SIMD level; read_bytes is the size of the
// buffer streamed (default 512 MiB), repetitions the number of timed runs kept at their best.
MachineLimits measure_machine_limits(ThreadPool& pool, size_t read_bytes = size_t(512) << 20, int repetitions = 5);

}  // namespace s3::bench
