// attention_bench.cpp: times paged attention alone (native/cpu/attention.h) at Qwen3-0.6B's layer
// geometry (NKV = 8 KV heads serving G = 2 query heads each, head_dim 128) and `small`'s head_dim
// 32, for f32, bf16 and fp8 caches in 16-position blocks shuffled over the pool, as an engine's
// block manager hands them out. The last column hashes the outputs' bits, to compare builds that
// should agree exactly.
//
// decode: S sequences (64 by default) each compute one new token over P cached positions. Reports
// ms per call and the cache read rate (keys, values and fp8 row scales of every visible position,
// once each) in GB/s, and the same per second of CPU time (steadier than wall time on a machine
// shared with other jobs; with 1 thread, the rate one core sustains). The 64 caches (38 MB at the
// smallest setting) exceed the 32 MB last-level cache of the machine it was written on, so calls
// read them (mostly) from DRAM; a few sequences (e.g. 2) keep the cache in L2/L3 and show what the
// kernels compute at most.
//
// prefill: one sequence computes P new tokens at once (causal). Reports ms per call and GFLOP/s of
// the causal products (P(P + 1)/2 visible pairs × 16 query heads × head_dim × 4), wall and per
// CPU-second, against the FMA peak of the level.
//
// Build (from the repository root, after a CPU build of libs3_core.a, e.g. build-cpu):
//   g++ -std=c++17 -O2 -g -Inative bench/attention_bench.cpp build-cpu/libs3_core.a -lpthread -o /tmp/attention_bench
// Run: /tmp/attention_bench decode [threads [repetitions [sequences]]]
//      /tmp/attention_bench prefill [threads [repetitions]]
// S3_SIMD=scalar|avx2|avx512 forces a level.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention.h"

namespace {

using s3::cpu::KvDtype;

constexpr int64_t kKvHeads = 8, kGroup = 2, kBlockSize = 16, kHeads = kKvHeads * kGroup;

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

// A paged cache of `sequences` × `positions` random finite values of `dtype` (f32/bf16 in ±2, fp8
// codes other than NaN with fixed row scales), blocks shuffled; the pages view it.
struct BenchCache {
  std::vector<uint8_t> keys, values;
  std::vector<float> key_scales, value_scales;
  std::vector<int32_t> table;
  int64_t blocks_per_sequence = 0, elements = 0;
  s3::cpu::KvPages pages;

  BenchCache(int64_t sequences, int64_t positions, int64_t HD, KvDtype dtype, Random& rng)
      : blocks_per_sequence(positions / kBlockSize) {
    const int64_t blocks = sequences * blocks_per_sequence, rows = blocks * kKvHeads * kBlockSize;
    elements = rows * HD;
    keys.resize(size_t(elements * s3::cpu::kv_dtype_size(dtype)));
    values.resize(keys.size());
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
    table.resize(size_t(blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    pages = {keys.data(), values.data(), kBlockSize, dtype, key_scales.empty() ? nullptr : key_scales.data(),
             value_scales.empty() ? nullptr : value_scales.data()};
  }
  const int32_t* sequence_table(int64_t b) const { return table.data() + b * blocks_per_sequence; }
};

struct Timing {
  double ms = 0.0, cpu_ms = 0.0;  // medians over the repetitions, after one warm-up call
  uint64_t output_hash = 0;
};

// attention_forward over `sequences` with random queries.
Timing time_attention(const BenchCache& cache, const std::vector<s3::cpu::AttentionSequence>& sequences,
                      int64_t tokens, int64_t HD, s3::ThreadPool& pool, int repetitions, Random& rng) {
  std::vector<float> q(size_t(tokens * kHeads * HD)), out(q.size());
  for (float& x : q) x = float(int64_t(rng() & 0xFFFF) - 0x8000) / 16384.0f;
  std::vector<double> ms, cpu_times;
  for (int rep = 0; rep <= repetitions; rep++) {
    const double cpu_begin = cpu_ms();
    const auto begin = std::chrono::steady_clock::now();
    s3::cpu::attention_forward(out.data(), q.data(), cache.pages, sequences.data(), int64_t(sequences.size()), kHeads,
                               kKvHeads, HD, pool);
    const auto end = std::chrono::steady_clock::now();
    if (rep == 0) continue;  // warm-up
    ms.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
    cpu_times.push_back(cpu_ms() - cpu_begin);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  return {ms[ms.size() / 2], cpu_times[cpu_times.size() / 2], hash_bits(out)};
}

// One decode step for `sequence_count` sequences, each one new token after positions − 1 cached.
void decode(int64_t sequence_count, s3::ThreadPool& pool, int repetitions) {
  std::printf("%-4s %-5s %-9s %9s %9s %7s %9s %11s  %s\n", "HD", "dtype", "positions", "cache MB", "ms/call",
              "GB/s", "CPU ms", "GB/CPU-s", "output hash");
  for (int64_t HD : {128, 32}) {
    for (int64_t positions : {1024, 2048}) {
      for (KvDtype dtype : {KvDtype::F32, KvDtype::Bf16, KvDtype::Fp8E4M3}) {
        Random rng{uint64_t(positions * HD) + uint64_t(dtype)};
        const BenchCache cache(sequence_count, positions, HD, dtype, rng);
        std::vector<s3::cpu::AttentionSequence> sequences(static_cast<size_t>(sequence_count));
        for (int64_t b = 0; b < sequence_count; b++) {
          sequences[size_t(b)] = {positions - 1, 1, cache.sequence_table(b), cache.blocks_per_sequence};
        }
        const Timing t = time_attention(cache, sequences, sequence_count, HD, pool, repetitions, rng);
        const int64_t rows = cache.elements / HD;
        const double gigabytes =
            double(2 * (cache.elements * s3::cpu::kv_dtype_size(dtype) + rows * s3::cpu::kv_row_scale_bytes(dtype))) / 1e9;
        std::printf("%-4lld %-5s %-9lld %9.1f %9.2f %7.2f %9.2f %11.2f  %016llx\n", (long long)HD, dtype_name(dtype),
                    (long long)positions, gigabytes * 1e3, t.ms, gigabytes / (t.ms / 1e3), t.cpu_ms,
                    gigabytes / (t.cpu_ms / 1e3), (unsigned long long)t.output_hash);
        std::fflush(stdout);
      }
    }
  }
}

// One prefill of P new tokens in one sequence.
void prefill(s3::ThreadPool& pool, int repetitions) {
  std::printf("%-4s %-5s %-9s %9s %9s %9s %13s  %s\n", "HD", "dtype", "positions", "ms/call", "GFLOP/s", "CPU ms",
              "GFLOP/CPU-s", "output hash");
  for (int64_t HD : {128, 32}) {
    for (int64_t positions : {512, 2048}) {
      for (KvDtype dtype : {KvDtype::F32, KvDtype::Bf16, KvDtype::Fp8E4M3}) {
        Random rng{uint64_t(positions * HD) + uint64_t(dtype)};
        const BenchCache cache(1, positions, HD, dtype, rng);
        const std::vector<s3::cpu::AttentionSequence> sequences = {
            {0, positions, cache.sequence_table(0), cache.blocks_per_sequence}};
        const Timing t = time_attention(cache, sequences, positions, HD, pool, repetitions, rng);
        const double gflop = double(positions) * double(positions + 1) / 2 * kHeads * double(HD) * 4 / 1e9;
        std::printf("%-4lld %-5s %-9lld %9.2f %9.1f %9.2f %13.1f  %016llx\n", (long long)HD, dtype_name(dtype),
                    (long long)positions, t.ms, gflop / (t.ms / 1e3), t.cpu_ms, gflop / (t.cpu_ms / 1e3),
                    (unsigned long long)t.output_hash);
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "decode" && mode != "prefill") {
    std::fprintf(stderr, "usage: attention_bench decode [threads [repetitions [sequences]]]\n"
                         "       attention_bench prefill [threads [repetitions]]\n");
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int repetitions = std::max(1, argc > 3 ? std::atoi(argv[3]) : 20);
  s3::ThreadPool pool(size_t(std::max(1, threads)));
  if (mode == "decode") {
    const int64_t sequence_count = argc > 4 ? std::max(1, std::atoi(argv[4])) : 64;
    std::printf("attention decode: %lld sequences, NKV %lld, G %lld, block %lld, %d threads, kernels %s\n",
                (long long)sequence_count, (long long)kKvHeads, (long long)kGroup, (long long)kBlockSize, threads,
                s3::cpu::attention_kernels().name);
    decode(sequence_count, pool, repetitions);
  } else {
    std::printf("attention prefill: 1 sequence, NKV %lld, G %lld, block %lld, %d threads, kernels %s\n",
                (long long)kKvHeads, (long long)kGroup, (long long)kBlockSize, threads, s3::cpu::attention_kernels().name);
    prefill(pool, repetitions);
  }
  return 0;
}
