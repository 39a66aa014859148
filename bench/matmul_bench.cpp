// matmul_bench.cpp: validates and times the CPU matmul (native/cpu/matmul.h) at every SIMD level
// this machine runs, on Qwen3-0.6B's linear-layer shapes, in the regimes that matter: decode
// (M = 1..64 rows, bound by streaming the weights from DRAM) and prefill (M in the hundreds,
// bound by FMA throughput). Weights cycle through copies totalling > 256 MB so each call reads
// them from DRAM, as a real forward pass does. rel.err is against a double reference on the f32
// input: ~1e-7 for the f32 levels, ~1e-3 at avx512bf16 and amx (BF16 and FP8 weights times the
// input rounded to BF16, on VDPBF16PS or AMX tiles; F32 weights keep the f32 path there).
//
// Build (from the repository root, after building native/core and native/cpu objects):
//   g++ -std=c++17 -O3 -Inative bench/matmul_bench.cpp <core and cpu objects> -lpthread -o matmul_bench
//   (or link a CMake build's static library: ... bench/matmul_bench.cpp build-tests-fast/libs3_core.a -lpthread -ldl)
// Run: ./matmul_bench [threads [dtype]]   (default: all cores, every dtype)
//      ./matmul_bench threads dtype ab      (avx512bf16 against avx512, alternated batch by batch
//                                            in one process, so a shared host's drift hits both)
//      ./matmul_bench threads dtype panels  (avx512bf16 on BF16 or FP8 weights packed into panels,
//                                            cpu/weight_panels.h, against the same weights as rows,
//                                            alternated the same way)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/aligned_allocator.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "cpu/weight_panels.h"

namespace {

using s3::DType;
using s3::cpu::MatrixView;

struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
  MatrixView view;
};

Weights make_weights(DType dtype, int64_t N, int64_t K, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  Weights w;
  w.bytes.resize(size_t(N * K) * s3::dtype_size(dtype));
  for (int64_t i = 0; i < N * K; i++) {
    const float value = normal(rng);
    if (dtype == DType::F32) reinterpret_cast<float*>(w.bytes.data())[i] = value;
    if (dtype == DType::BF16) reinterpret_cast<uint16_t*>(w.bytes.data())[i] = s3::f32_to_bf16(value);
    if (dtype == DType::F8_E4M3) w.bytes[size_t(i)] = s3::f32_to_fp8e4m3(value * 4000.0f);
  }
  w.view = {w.bytes.data(), dtype, N, K, nullptr};
  if (dtype == DType::F8_E4M3) {
    w.scales.assign(size_t(w.view.scale_cols() * ((N + 127) / 128)), 1.0f / 4000.0f);
    w.view.block_scales = w.scales.data();
  }
  return w;
}

double max_relative_error(const std::vector<float>& out, const float* inp, const MatrixView& w, int64_t M) {
  double worst = 0.0;
  for (int64_t m = 0; m < M; m += std::max<int64_t>(1, M / 4)) {
    for (int64_t n = 0; n < w.rows; n += 37) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < w.cols; k++) {
        const double term = double(inp[m * w.cols + k]) * s3::cpu::matrix_element(w, n, k);
        exact += term;
        magnitude += std::fabs(term);
      }
      worst = std::max(worst, std::fabs(out[size_t(m * w.rows + n)] - exact) / (magnitude + 1e-30));
    }
  }
  return worst;
}

// Copies of one random weight totalling > 256 MB (so each call reads them from DRAM) and a random input.
struct Problem {
  size_t weight_bytes = 0;
  size_t copies = 0;
  std::vector<Weights> stack;
  std::vector<float> inp, out;
};

Problem make_problem(DType dtype, int64_t N, int64_t K, int64_t M) {
  std::mt19937 rng(1);
  Problem p;
  p.weight_bytes = size_t(N * K) * s3::dtype_size(dtype);
  p.copies = std::max<size_t>(1, (size_t(256) << 20) / p.weight_bytes);
  p.stack.push_back(make_weights(dtype, N, K, rng));
  for (size_t i = 1; i < p.copies; i++) p.stack.push_back(p.stack[0]);
  for (size_t i = 1; i < p.copies; i++) {
    p.stack[i].view.data = p.stack[i].bytes.data();
    p.stack[i].view.block_scales = p.stack[i].scales.data();
  }
  p.inp.resize(size_t(M * K));
  p.out.resize(size_t(M * N));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : p.inp) x = normal(rng);
  return p;
}

void bench(const s3::cpu::MatmulKernels& kernels, s3::ThreadPool& pool, DType dtype, int64_t N, int64_t K, int64_t M) {
  Problem p = make_problem(dtype, N, K, M);
  const size_t weight_bytes = p.weight_bytes, copies = p.copies;
  std::vector<Weights>& stack = p.stack;
  std::vector<float>&inp = p.inp, &out = p.out;

  s3::cpu::matmul_forward(out.data(), inp.data(), stack[0].view, M, pool, kernels);
  const double error = max_relative_error(out, inp.data(), stack[0].view, M);

  // Best of several timed batches: the machine is shared, and the minimum is the kernel's own speed.
  size_t calls = 0;
  double per_call = 1e30;
  for (int batch = 0; batch < 15; batch++) {
    const auto start = std::chrono::steady_clock::now();
    size_t batch_calls = 0;
    double seconds = 0.0;
    while (seconds < 0.04) {
      s3::cpu::matmul_forward(out.data(), inp.data(), stack[calls % copies].view, M, pool, kernels);
      calls++, batch_calls++;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    per_call = std::min(per_call, seconds / double(batch_calls));
  }
  std::printf("%-7s %-8s N=%5lld K=%5lld M=%4lld  %8.1f us  %7.1f GFLOP/s  %6.1f GB/s(weights)  rel.err %.1e\n",
              kernels.name, s3::dtype_name(dtype), (long long)N, (long long)K, (long long)M, per_call * 1e6,
              2.0 * double(M * N * K) / per_call / 1e9, double(weight_bytes) / per_call / 1e9, error);
}

// Best time per call of each of two kernel tables on the same weights, their 40 ms batches
// alternated 21 times.
void bench_alternated(const s3::cpu::MatmulKernels& a, const s3::cpu::MatmulKernels& b, s3::ThreadPool& pool, DType dtype,
                      int64_t N, int64_t K, int64_t M) {
  Problem p = make_problem(dtype, N, K, M);
  const size_t copies = p.copies;
  std::vector<Weights>& stack = p.stack;
  std::vector<float>&inp = p.inp, &out = p.out;
  const s3::cpu::MatmulKernels* tables[2] = {&a, &b};
  double best[2] = {1e30, 1e30};
  size_t calls = 0;
  for (int batch = 0; batch < 42; batch++) {
    const s3::cpu::MatmulKernels& kernels = *tables[batch % 2];
    const auto start = std::chrono::steady_clock::now();
    size_t batch_calls = 0;
    double seconds = 0.0;
    while (seconds < 0.04) {
      s3::cpu::matmul_forward(out.data(), inp.data(), stack[calls % copies].view, M, pool, kernels);
      calls++, batch_calls++;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    best[batch % 2] = std::min(best[batch % 2], seconds / double(batch_calls));
  }
  std::printf("%-8s N=%5lld K=%5lld M=%4lld  %s %8.1f us %6.1f GFLOP/s  %s %8.1f us %6.1f GFLOP/s  ratio %.2f\n",
              s3::dtype_name(dtype), (long long)N, (long long)K, (long long)M, a.name, best[0] * 1e6,
              2.0 * double(M * N * K) / best[0] / 1e9, b.name, best[1] * 1e6, 2.0 * double(M * N * K) / best[1] / 1e9,
              best[1] / best[0]);
}

// Best time per call of the avx512bf16 kernels on each copy's panels (packed here) and on the same
// copies as rows, their 40 ms batches alternated 21 times.
void bench_panels_alternated(s3::ThreadPool& pool, DType dtype, int64_t N, int64_t K, int64_t M) {
  const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512Bf16);
  Problem p = make_problem(dtype, N, K, M);
  std::vector<s3::CacheLineVector<uint8_t>> panels(p.copies);
  std::vector<MatrixView> with_panels(p.copies);
  for (size_t i = 0; i < p.copies; i++) {
    panels[i].resize(size_t(s3::cpu::weight_panel_bytes(p.stack[i].view)));
    s3::cpu::pack_weight_panels(p.stack[i].view, panels[i].data(), pool);
    with_panels[i] = p.stack[i].view;
    s3::cpu::attach_weight_panels(with_panels[i], panels[i].data());
  }
  s3::cpu::matmul_forward(p.out.data(), p.inp.data(), with_panels[0], M, pool, kernels);
  const double error = max_relative_error(p.out, p.inp.data(), p.stack[0].view, M);
  double best[2] = {1e30, 1e30};
  size_t calls = 0;
  for (int batch = 0; batch < 42; batch++) {
    const bool panel = batch % 2 == 0;
    const auto start = std::chrono::steady_clock::now();
    size_t batch_calls = 0;
    double seconds = 0.0;
    while (seconds < 0.04) {
      const size_t copy = calls % p.copies;
      s3::cpu::matmul_forward(p.out.data(), p.inp.data(), panel ? with_panels[copy] : p.stack[copy].view, M, pool,
                              kernels);
      calls++, batch_calls++;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    best[batch % 2] = std::min(best[batch % 2], seconds / double(batch_calls));
  }
  std::printf("%-8s N=%5lld K=%5lld M=%4lld  panels %8.1f us %6.1f GFLOP/s  rows %8.1f us %6.1f GFLOP/s  ratio %.2f  rel.err %.1e\n",
              s3::dtype_name(dtype), (long long)N, (long long)K, (long long)M, best[0] * 1e6,
              2.0 * double(M * N * K) / best[0] / 1e9, best[1] * 1e6, 2.0 * double(M * N * K) / best[1] / 1e9,
              best[1] / best[0], error);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? size_t(std::atoi(argv[1])) : s3::default_thread_count();
  const std::string only_dtype = argc > 2 ? argv[2] : "";
  s3::ThreadPool pool(threads);
  if (argc > 3 && std::string(argv[3]) == "ab") {
    if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
      std::printf("this CPU lacks AVX512-BF16: nothing to compare\n");
      return 0;
    }
    const s3::cpu::MatmulKernels& bf16 = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512Bf16);
    const s3::cpu::MatmulKernels& f32 = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512);
    const DType dtype = only_dtype == "F8_E4M3" ? DType::F8_E4M3 : DType::BF16;
    const int64_t ab_shapes[][2] = {{3072, 1024}, {1024, 3072}};
    for (const auto& shape : ab_shapes) {
      for (int64_t M : {1, 2, 3, 4, 512}) bench_alternated(bf16, f32, pool, dtype, shape[0], shape[1], M);
    }
    return 0;
  }
  if (argc > 3 && std::string(argv[3]) == "panels") {
    if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
      std::printf("this CPU lacks AVX512-BF16: no panel kernel to time\n");
      return 0;
    }
    const DType dtype = only_dtype == "F8_E4M3" ? DType::F8_E4M3 : DType::BF16;
    const int64_t panel_shapes[][2] = {{3072, 1024}, {1024, 3072}};
    for (const auto& shape : panel_shapes) {
      for (int64_t M : {1, 4, 5, 8, 16, 64, 512}) bench_panels_alternated(pool, dtype, shape[0], shape[1], M);
    }
    return 0;
  }
  std::printf("threads %zu, cpu level %s\n", threads, s3::simd_level_name(s3::cpu_info().supported_level));
  const int64_t shapes[][2] = {{3072, 1024}, {1024, 3072}};
  const int64_t rows[] = {1, 2, 3, 4, 16, 64, 256, 512};
  for (s3::SimdLevel level : {s3::SimdLevel::Amx, s3::SimdLevel::Avx512Bf16, s3::SimdLevel::Avx512, s3::SimdLevel::Avx2}) {
    if (s3::cpu_info().supported_level < level) continue;
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (DType dtype : {DType::BF16, DType::F8_E4M3, DType::F32}) {
      if (!only_dtype.empty() && only_dtype != s3::dtype_name(dtype)) continue;
      for (const auto& shape : shapes) {
        for (int64_t M : rows) bench(kernels, pool, dtype, shape[0], shape[1], M);
      }
    }
  }
}
