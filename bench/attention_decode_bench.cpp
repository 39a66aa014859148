// attention_decode_bench.cpp: times paged decode attention alone (native/cpu/attention.h): 64
// sequences each computing one new token over P cached positions, NKV = 8 KV heads serving G = 2
// query heads each, head_dim 128 (Qwen3-0.6B's layer) and 32 (`small`), for f32, bf16 and fp8
// caches. Reports ms per call and the cache read rate (keys, values and fp8 row scales of every
// visible position, once each) in GB/s, and the same per second of CPU time (steadier than wall
// time on a machine shared with other jobs; with 1 thread, the rate one core sustains). Blocks of
// 16 positions are shuffled over the pool, as an engine's block manager hands them out; the 64
// caches (38 MB at the smallest setting, fp8 at head_dim 32 over 1,024 positions) exceed the 32 MB
// last-level cache of the machine it was written on, so calls read them (mostly) from DRAM. The
// last column hashes the outputs' bits, to compare builds that should agree exactly.
//
// Build (from the repository root, after the C++ tests' build, e.g. build-attn-tests):
//   g++ -std=c++17 -O2 -g -Inative bench/attention_decode_bench.cpp build-attn-tests/libs3_core.a
//       -lpthread -o /tmp/attention_decode_bench
// Run: /tmp/attention_decode_bench [threads [repetitions [sequences]]]; S3_SIMD=scalar|avx2 forces
// a level; a few sequences (e.g. 2) keep the cache in L2/L3 and show what the kernels compute at most.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention.h"

namespace {

using s3::cpu::KvDtype;

constexpr int64_t kKvHeads = 8, kGroup = 2, kBlockSize = 16;
int64_t sequence_count = 64;  // argv[3] may change it

const char* dtype_name(KvDtype dtype) {
  return dtype == KvDtype::F32 ? "f32" : dtype == KvDtype::Bf16 ? "bf16" : "fp8";
}

// splitmix64: fast enough to fill a gigabyte of cache.
struct Random {
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t(0); }
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// FNV-1a over the bits of `values`.
uint64_t hash_bits(const std::vector<float>& values) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (float x : values) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    hash = (hash ^ bits) * 0x100000001B3ull;
  }
  return hash;
}

// CPU time this process has used, in ms (all threads).
double cpu_ms() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

// One decode step's attention for every sequence; returns the median wall ms over `repetitions`
// calls and sets *cpu to the median CPU ms (which a machine shared with other jobs inflates less).
double time_decode(int64_t positions, int64_t HD, KvDtype dtype, s3::ThreadPool& pool, int repetitions,
                   double* gigabytes, double* cpu, uint64_t* output_hash) {
  const int64_t blocks_per_sequence = positions / kBlockSize, blocks = sequence_count * blocks_per_sequence;
  const int64_t elements = blocks * kKvHeads * kBlockSize * HD, rows = elements / HD;
  const int64_t element_bytes = s3::cpu::kv_dtype_size(dtype);
  std::vector<uint8_t> keys(size_t(elements * element_bytes)), values(keys.size());
  std::vector<float> key_scales, value_scales;
  Random rng{uint64_t(positions * HD) + uint64_t(dtype)};
  // Random finite values of each dtype: f32/bf16 in ±2, fp8 codes other than NaN.
  auto fill = [&](std::vector<uint8_t>& bytes) {
    if (dtype == KvDtype::Fp8E4M3) {
      for (uint8_t& b : bytes) b = uint8_t(rng() & 0xF7);  // bit 3 clear: never the NaN codes 0x7F, 0xFF
      return;
    }
    for (int64_t i = 0; i < elements; i++) {
      const float x = float(int64_t(rng() & 0xFFFF) - 0x8000) / 16384.0f;
      if (dtype == KvDtype::F32) {
        reinterpret_cast<float*>(bytes.data())[i] = x;
      } else {
        reinterpret_cast<uint16_t*>(bytes.data())[i] = s3::f32_to_bf16(x);
      }
    }
  };
  fill(keys);
  fill(values);
  if (dtype == KvDtype::Fp8E4M3) {
    key_scales.assign(size_t(rows), 0.004f);
    value_scales.assign(size_t(rows), 0.003f);
  }
  std::vector<int32_t> table(static_cast<size_t>(blocks));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  std::vector<s3::cpu::AttentionSequence> sequences(static_cast<size_t>(sequence_count));
  for (int64_t b = 0; b < sequence_count; b++) {
    sequences[size_t(b)] = {positions - 1, 1, table.data() + b * blocks_per_sequence, blocks_per_sequence};
  }
  const s3::cpu::KvPages pages{keys.data(), values.data(), kBlockSize, dtype,
                               key_scales.empty() ? nullptr : key_scales.data(),
                               value_scales.empty() ? nullptr : value_scales.data()};
  const int64_t NH = kKvHeads * kGroup;
  std::vector<float> q(size_t(sequence_count * NH * HD)), out(q.size());
  for (float& x : q) x = float(int64_t(rng() & 0xFFFF) - 0x8000) / 16384.0f;
  std::vector<double> ms, cpu_times;
  for (int rep = 0; rep <= repetitions; rep++) {
    const double cpu_begin = cpu_ms();
    const auto begin = std::chrono::steady_clock::now();
    s3::cpu::attention_forward(out.data(), q.data(), pages, sequences.data(), sequence_count, NH, kKvHeads, HD,
                               pool);
    const auto end = std::chrono::steady_clock::now();
    if (rep == 0) continue;  // warm-up
    ms.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
    cpu_times.push_back(cpu_ms() - cpu_begin);
  }
  *output_hash = hash_bits(out);
  std::sort(cpu_times.begin(), cpu_times.end());
  *cpu = cpu_times[cpu_times.size() / 2];
  std::sort(ms.begin(), ms.end());
  *gigabytes = double(2 * (elements * element_bytes + rows * s3::cpu::kv_row_scale_bytes(dtype))) / 1e9;
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 20;
  if (argc > 3) sequence_count = std::max(1, std::atoi(argv[3]));
  s3::ThreadPool pool(size_t(std::max(1, threads)));
  std::printf("attention decode: %lld sequences, NKV %lld, G %lld, block %lld, %d threads, kernels %s\n",
              (long long)sequence_count, (long long)kKvHeads, (long long)kGroup, (long long)kBlockSize, threads,
              s3::cpu::attention_kernels().name);
  std::printf("%-4s %-5s %-9s %9s %9s %7s %9s %11s  %s\n", "HD", "dtype", "positions", "cache MB", "ms/call",
              "GB/s", "CPU ms", "GB/CPU-s", "output hash");
  for (int64_t HD : {128, 32}) {
    for (int64_t positions : {1024, 2048}) {
      for (KvDtype dtype : {KvDtype::F32, KvDtype::Bf16, KvDtype::Fp8E4M3}) {
        double gigabytes = 0.0, cpu = 0.0;
        uint64_t output_hash = 0;
        const double ms = time_decode(positions, HD, dtype, pool, repetitions, &gigabytes, &cpu, &output_hash);
        std::printf("%-4lld %-5s %-9lld %9.1f %9.2f %7.2f %9.2f %11.2f  %016llx\n", (long long)HD, dtype_name(dtype),
                    (long long)positions, gigabytes * 1e3, ms, gigabytes / (ms / 1e3), cpu, gigabytes / (cpu / 1e3),
                    (unsigned long long)output_hash);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
