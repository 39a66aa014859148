// test_cuda_gemm.cpp: the cuBLASLt GEMMs (cuda/matmul.h). First a known product per dtype with exact
// integer values, which a wrong layout, transpose or pinned enum value (scale modes, attributes)
// would break; then random products against the CPU on the very same inputs (f32 and bf16 inputs
// with f32 accumulation: NMSE ≤ 1e-7; block-scaled FP8 against the dequantized double product:
// NMSE ≤ 1e-6, or ≤ 1e-5 where cuBLASLt only takes a bf16 D, whose rounding alone is ~2.5e-6), on
// K = 256 (two K-blocks: the scale-padding trap), Qwen3-0.6B's shapes and row counts 1 to 130; and
// batch invariance: a row's bits do not depend on how many rows share the call. Each test prints the
// FP8 form cuBLASLt accepted (Fp8GemmForm); a refusal fails with every form tried and its answer.
// Skipped where CUDA (device and cuBLASLt) is not usable; FP8 only where block scaling runs.
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/ops/fp8_block_scales.h"
#include "core/ops/fp8_rows.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "model/fp8_quantize.h"
#include "tests/cuda_test_support.h"

#ifdef S3_WITH_CUDA
#include "cuda/cublaslt.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "cuda/fp8_activations.h"
#include "cuda/matmul.h"

using s3test::DeviceArray;
namespace ops = s3::ops;

namespace {

struct GemmFixture {
  s3::cuda::DeviceAllocator allocator{"test"};
  s3::cuda::Stream stream;
  s3::cuda::Gemm gemm{s3::cuda::cublaslt().library, allocator, stream.get(), 256};
  bool fp8 = false;
  GemmFixture() {
    const s3::cuda::DeviceQuery query = s3::cuda::query_devices();
    fp8 = s3::cuda::fp8_block_scaling(*s3::cuda::cublaslt().library, query.devices[0].compute_major, query.devices[0].compute_minor);
  }
  std::vector<float> run(const void* in, const float* in_scales, const s3::cuda::DeviceMatrix& w, int64_t M) {
    const int64_t rows = w.dtype == s3::cuda::GemmDtype::Fp8 ? ops::fp8_activation_rows(M) : M;
    DeviceArray<float> out(size_t(rows * w.rows));
    gemm.run(out.get(), in, in_scales, w, M);
    stream.synchronize("gemm");
    std::vector<float> all = out.download();
    all.resize(size_t(M * w.rows));
    return all;
  }
};

std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = s3::f32_to_bf16(v[i]);
  return out;
}

std::vector<float> rounded_to_bf16(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = s3::bf16_to_f32(s3::f32_to_bf16(v[i]));
  return out;
}

std::vector<float> cpu_product(const std::vector<float>& x, const void* w, s3::DType dtype, const float* scales, int64_t M,
                               int64_t N, int64_t K) {
  s3::ThreadPool pool(2);
  std::vector<float> out(size_t(M * N));
  s3::cpu::matmul_forward(out.data(), x.data(), s3::cpu::MatrixView{w, dtype, N, K, scales}, M, pool);
  return out;
}

// The FP8 weight's scales in cuBLASLt's padded layout, from the checkpoint's row-major ones.
std::vector<float> padded(const std::vector<float>& scales, int64_t N, int64_t K) {
  std::vector<float> out(size_t(ops::weight_scale_count(N, K)), 1.0f);
  for (int64_t nb = 0; nb < ops::fp8_blocks(N); nb++) {
    for (int64_t kb = 0; kb < ops::fp8_blocks(K); kb++) out[size_t(ops::weight_scale_index(nb, kb, K))] = scales[size_t(nb * ops::fp8_blocks(K) + kb)];
  }
  return out;
}

}  // namespace

TEST(cuda_gemm_computes_a_known_product_in_every_dtype) {
  s3test::require_cuda();
  GemmFixture f;
  // out[m][n] = Σ_k x[m][k] · w[n][k] with small integers: exact in f32, bf16 and fp8 (scale 1).
  const int64_t M = 4, N = 128, K = 128;
  std::vector<float> x(size_t(M * K)), w(size_t(N * K)), want(size_t(M * N), 0.0f);
  for (int64_t m = 0; m < M; m++) {
    for (int64_t k = 0; k < K; k++) x[size_t(m * K + k)] = float((m + k) % 5) - 2.0f;
  }
  for (int64_t m = 0; m < M; m++) x[size_t(m * K)] = 448.0f;  // each 1×128 group's scale is exactly 1
  for (int64_t n = 0; n < N; n++) {
    for (int64_t k = 0; k < K; k++) w[size_t(n * K + k)] = float((3 * n + k) % 7) - 3.0f;
  }
  // The 128×128 block's scale is exactly 1. At k = 1, not 0: no product is 448², so every partial
  // sum stays below 2^12, exact even where FP8 tensor cores keep only ~14 bits of the accumulator
  // between promotions (DeepSeek-V3 technical report, section 3.3.2).
  w[1] = 448.0f;
  for (int64_t m = 0; m < M; m++) {
    for (int64_t n = 0; n < N; n++) {
      for (int64_t k = 0; k < K; k++) want[size_t(m * N + n)] += x[size_t(m * K + k)] * w[size_t(n * K + k)];
    }
  }
  DeviceArray<float> x32(x), w32(w);
  CHECK(f.run(x32.get(), nullptr, {w32.get(), s3::cuda::GemmDtype::F32, N, K, nullptr}, M) == want);
  DeviceArray<uint16_t> x16(to_bf16(x)), w16(to_bf16(w));
  CHECK(f.run(x16.get(), nullptr, {w16.get(), s3::cuda::GemmDtype::Bf16, N, K, nullptr}, M) == want);
  if (!f.fp8) return;
  // The accumulator holds the exact integers; a bf16 D rounds each to nearest even.
  const std::vector<float> want8 = f.gemm.fp8_form(N, K).bf16_output ? rounded_to_bf16(want) : want;
  std::printf("  %s\n", f.gemm.fp8_description().c_str());
  std::vector<uint8_t> w8(w.size());
  std::vector<float> w_scales(1);
  s3::model::quantize_fp8_blockwise(w.data(), N, K, w8.data(), w_scales.data());
  CHECK_EQ(w_scales[0], 1.0f);
  DeviceArray<uint8_t> dw8(w8), dx8(size_t(ops::fp8_activation_rows(M) * K));
  DeviceArray<float> dws(padded(w_scales, N, K)), dxs(size_t(ops::fp8_activation_rows(M) * ops::fp8_blocks(K)));
  s3::cuda::quantize_fp8_activations(dx8.get(), dxs.get(), x32.get(), M, K, nullptr);
  CHECK(f.run(dx8.get(), dxs.get(), {dw8.get(), s3::cuda::GemmDtype::Fp8, N, K, dws.get()}, M) == want8);
}

TEST(cuda_gemm_matches_the_cpu_on_the_same_inputs_and_is_batch_invariant) {
  s3test::require_cuda();
  GemmFixture f;
  for (auto [N, K] : {std::pair<int64_t, int64_t>{256, 256}, {1024, 1024}, {3072, 1024}, {1024, 3072}}) {
    const int64_t M_max = 130;
    const std::vector<float> w = s3test::random_floats(size_t(N * K), 1, 1.0f / std::sqrt(float(K)));
    const std::vector<float> x_all = s3test::random_floats(size_t(M_max * K), 2, 1.0f);
    const std::vector<uint16_t> w16 = to_bf16(w);
    std::vector<uint8_t> w8(w.size());
    std::vector<float> w_scales(size_t(ops::fp8_blocks(N) * ops::fp8_blocks(K)));
    s3::model::quantize_fp8_blockwise(w.data(), N, K, w8.data(), w_scales.data());
    std::vector<double> w8_dequantized(w8.size());  // w8 · its block's scale, for the fp8 reference
    for (int64_t n = 0; n < N; n++) {
      for (int64_t k = 0; k < K; k++) {
        w8_dequantized[size_t(n * K + k)] =
            double(s3::fp8e4m3_to_f32(w8[size_t(n * K + k)])) * w_scales[size_t((n / 128) * ops::fp8_blocks(K) + k / 128)];
      }
    }
    DeviceArray<float> dw32(w), dws(padded(w_scales, N, K));
    DeviceArray<uint16_t> dw16(w16);
    DeviceArray<uint8_t> dw8(w8);
    std::vector<float> first_row[3];
    for (int64_t M : {int64_t(1), int64_t(3), int64_t(17), M_max}) {
      const std::vector<float> x(x_all.begin(), x_all.begin() + M * K);
      const std::string shape = "N=" + std::to_string(N) + " K=" + std::to_string(K) + " M=" + std::to_string(M);
      // f32
      DeviceArray<float> dx(x);
      const std::vector<float> got32 = f.run(dx.get(), nullptr, {dw32.get(), s3::cuda::GemmDtype::F32, N, K, nullptr}, M);
      const std::vector<float> want32 = cpu_product(x, w.data(), s3::DType::F32, nullptr, M, N, K);
      CHECK_NMSE("gemm f32 " + shape, got32.data(), want32.data(), got32.size(), 1e-7);
      // bf16: the CPU multiplies the same bf16-rounded inputs
      const std::vector<float> x_rounded = rounded_to_bf16(x);
      DeviceArray<uint16_t> dx16(to_bf16(x));
      const std::vector<float> got16 = f.run(dx16.get(), nullptr, {dw16.get(), s3::cuda::GemmDtype::Bf16, N, K, nullptr}, M);
      const std::vector<float> want16 = cpu_product(x_rounded, w16.data(), s3::DType::BF16, nullptr, M, N, K);
      CHECK_NMSE("gemm bf16 " + shape, got16.data(), want16.data(), got16.size(), 1e-7);
      std::vector<float> got8;
      if (f.fp8) {
        // fp8: the CPU multiplies the dequantized activations (fp8(x / s) · s) by the fp8 weights.
        DeviceArray<uint8_t> dx8(size_t(ops::fp8_activation_rows(M) * K));
        DeviceArray<float> dxs(size_t(ops::fp8_activation_rows(M) * ops::fp8_blocks(K)));
        s3::cuda::quantize_fp8_activations(dx8.get(), dxs.get(), dx.get(), M, K, nullptr);
        got8 = f.run(dx8.get(), dxs.get(), {dw8.get(), s3::cuda::GemmDtype::Fp8, N, K, dws.get()}, M);
        // The dequantized product in double: Σ_k (fp8(x / s) · s) · (w8 · w_scale). Not the CPU's FP8
        // matmul: on CPUs with BF16 dot products it rounds the activations to bf16 (NMSE ~2e-6 alone).
        std::vector<double> x_dequantized(x.size());
        for (int64_t m = 0; m < M; m++) {
          for (int64_t kb = 0; kb < ops::fp8_blocks(K); kb++) {
            float max_abs = 0.0f;
            for (int64_t k = kb * 128; k < std::min(K, kb * 128 + 128); k++) max_abs = std::max(max_abs, std::fabs(x[size_t(m * K + k)]));
            const float s = ops::fp8_row_scale(max_abs, true);
            for (int64_t k = kb * 128; k < std::min(K, kb * 128 + 128); k++) {
              x_dequantized[size_t(m * K + k)] = double(s3::fp8e4m3_to_f32(ops::fp8_row_encode(x[size_t(m * K + k)], s, true))) * s;
            }
          }
        }
        std::vector<float> want8(size_t(M * N));
        for (int64_t m = 0; m < M; m++) {
          for (int64_t n = 0; n < N; n++) {
            double sum = 0.0;
            for (int64_t k = 0; k < K; k++) sum += x_dequantized[size_t(m * K + k)] * w8_dequantized[size_t(n * K + k)];
            want8[size_t(m * N + n)] = float(sum);
          }
        }
        CHECK_NMSE("gemm fp8 " + shape, got8.data(), want8.data(), got8.size(), f.gemm.fp8_form(N, K).bf16_output ? 1e-5 : 1e-6);
      }
      // Row 0 has the same bits whatever M is.
      const std::vector<float>* rows[3] = {&got32, &got16, &got8};
      for (int d = 0; d < 3; d++) {
        if (rows[d]->empty()) continue;
        const std::vector<float> row(rows[d]->begin(), rows[d]->begin() + N);
        if (first_row[d].empty()) first_row[d] = row;
        CHECK(row == first_row[d]);
      }
    }
  }
  if (f.fp8) std::printf("  %s\n", f.gemm.fp8_description().c_str());
  std::printf("  gemm batch-invariant: %s\n", f.gemm.batch_invariant() ? "yes" : "no");
  CHECK(f.gemm.batch_invariant());
}

#else

TEST(cuda_gemm) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
