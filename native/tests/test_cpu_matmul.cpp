// The CPU matmul (native/cpu/matmul) at every SIMD level this machine runs, against a double
// reference on the exactly converted weights (f32, bf16, f16, fp8 blockwise), on shapes that
// exercise register-tile and vector tails, and the invariants the engine's determinism rests on:
// a row's result is the same bits whatever M, whichever rows share its tile, whatever the
// thread count, and whether the weights went through a packed panel or not. The avx512bf16
// level (BF16 products for BF16 and FP8 weights) is checked against a double reference on the
// BF16-rounded input, against the f32 path within BF16 rounding, and for the same invariants;
// without AVX512-BF16 its tests skip. The amx level's kernel (the same products on AMX tiles) gets
// the same tests twice: over the software model of the tiles (kMatmulAmxModel, wherever AVX512-BF16
// exists) and on the hardware where the CPU has AMX (else that half skips, saying so). The AVX2,
// AVX-512 and avx512bf16 levels' summation order is pinned bit for bit against a scalar emulation.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "tests/naive_qwen3.h"
#include "tests/simd_levels.h"
#include "tests/test_framework.h"

namespace {

using s3::DType;
using s3::cpu::MatrixView;

using s3::tests::runnable_levels;
using s3::tests::runnable_levels_with_bf16;

// A random [N × K] weight in `dtype` (FP8 with block scales), through the test-model helpers.
struct RandomWeight {
  s3test::TestModel storage;
  MatrixView view;
  std::vector<double> values;  // exact element values

  RandomWeight(DType dtype, int64_t N, int64_t K, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> raw(size_t(N * K));
    for (float& v : raw) v = normal(rng);
    s3test::add_test_tensor(storage, "w", {N, K}, raw, dtype);
    const float* scales = dtype == DType::F8_E4M3
                              ? reinterpret_cast<const float*>(storage.tensor("w_scale_inv").bytes.data())
                              : nullptr;
    view = {storage.tensor("w").bytes.data(), dtype, N, K, scales};
    values = storage.values("w");
  }
};

std::vector<float> random_input(int64_t M, int64_t K, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(M * K));
  for (float& v : x) v = normal(rng);
  return x;
}

const DType kWeightTypes[] = {DType::F32, DType::BF16, DType::F16, DType::F8_E4M3};
// The weights the avx512bf16 level multiplies in BF16 (F32 and F16 keep the f32 path).
const DType kBf16ProductTypes[] = {DType::BF16, DType::F8_E4M3};

// M, N, K: the shapes above plus K below one 16-lane step, K off the 32-value BF16 step (and off
// the 128-wide FP8 scale block), odd M, N off both register tiles (6 and 3 weight rows), and a
// long K with many row tiles (M = 70, K = 4096: 32 scale blocks).
const int64_t kBf16Shapes[][3] = {{1, 1, 1},     {3, 5, 7},     {5, 17, 16},   {7, 13, 33},  {2, 7, 15},   {13, 130, 300},
                                  {33, 40, 129}, {9, 260, 256}, {4, 11, 47},  {6, 29, 200}, {70, 9, 4096}};

void skip_without_bf16() {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the avx512bf16 matmul level cannot run here");
  }
}

// The kernel tables that multiply in BF16 and that this machine runs: avx512bf16, the AMX kernel
// over its tile model, and the AMX kernel on the hardware.
std::vector<const s3::cpu::MatmulKernels*> bf16_product_kernels() {
  std::vector<const s3::cpu::MatmulKernels*> kernels;
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Avx512Bf16) {
    kernels.push_back(s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512Bf16));
    kernels.push_back(&s3::cpu::kMatmulAmxModel);
  }
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Amx) {
    kernels.push_back(s3::cpu::matmul_kernels_for(s3::SimdLevel::Amx));
  } else {
    std::printf("  (no AMX here, or the kernel refused tile data: the amx kernels run only over their tile model)\n");
  }
  return kernels;
}

std::vector<float> rounded_to_bf16(const std::vector<float>& x) {
  std::vector<float> rounded(x.size());
  for (size_t i = 0; i < x.size(); i++) rounded[i] = s3::bf16_to_f32(s3::f32_to_bf16(x[i]));
  return rounded;
}

// Every element of out = x · wᵀ against the f64 products of `x` (the input the kernel multiplied)
// and the weight's exact values, within 1e-6 Σ|x·w|: the f32 levels' accumulation bound.
void check_against_f64_products(const std::vector<float>& out, const std::vector<float>& x, const RandomWeight& w, int64_t M,
                                int64_t N, int64_t K) {
  for (int64_t m = 0; m < M; m++) {
    for (int64_t n = 0; n < N; n++) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < K; k++) {
        exact += double(x[size_t(m * K + k)]) * w.values[size_t(n * K + k)];
        magnitude += std::fabs(double(x[size_t(m * K + k)]) * w.values[size_t(n * K + k)]);
      }
      CHECK_NEAR(out[size_t(m * N + n)], exact, 1e-6 * magnitude + 1e-30);
    }
  }
}

}  // namespace

TEST(matmul_matches_double_reference_at_every_level_and_dtype) {
  s3::ThreadPool pool(2);
  const int64_t shapes[][3] = {{1, 1, 1},      {3, 5, 7},     {5, 17, 16}, {7, 13, 33},
                               {13, 130, 300}, {33, 40, 129}, {9, 260, 256}};  // M, N, K
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (DType dtype : kWeightTypes) {
      for (const auto& shape : shapes) {
        const int64_t M = shape[0], N = shape[1], K = shape[2];
        const RandomWeight w(dtype, N, K, uint64_t(N * 1000 + K));
        const std::vector<float> x = random_input(M, K, uint64_t(M));
        std::vector<float> out(size_t(M * N));
        s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, kernels);
        check_against_f64_products(out, x, w, M, N, K);
      }
    }
  }
}

TEST(matmul_row_results_do_not_depend_on_the_batch_or_threads) {
  s3::ThreadPool one(1), two(2), three(3);
  const int64_t M = 37, N = 70, K = 300;
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (DType dtype : kWeightTypes) {
      const RandomWeight w(dtype, N, K, 5);
      const std::vector<float> x = random_input(M, K, 6);
      std::vector<float> batched(size_t(M * N)), again(size_t(M * N)), threaded(size_t(M * N));
      s3::cpu::matmul_forward(batched.data(), x.data(), w.view, M, two, kernels);
      s3::cpu::matmul_forward(again.data(), x.data(), w.view, M, two, kernels);
      s3::cpu::matmul_forward(threaded.data(), x.data(), w.view, M, three, kernels);
      CHECK(batched == again);
      CHECK(batched == threaded);
      // Every row alone, and a few sub-batches that put rows in other tile positions.
      for (int64_t m = 0; m < M; m++) {
        std::vector<float> alone(static_cast<size_t>(N));
        s3::cpu::matmul_forward(alone.data(), &x[size_t(m * K)], w.view, 1, one, kernels);
        CHECK(std::equal(alone.begin(), alone.end(), batched.begin() + m * N));
      }
      for (int64_t first : {1, 2, 5}) {
        const int64_t rows = M - first;
        std::vector<float> part(size_t(rows * N));
        s3::cpu::matmul_forward(part.data(), &x[size_t(first * K)], w.view, rows, two, kernels);
        CHECK(std::equal(part.begin(), part.end(), batched.begin() + first * N));
      }
    }
  }
}

// The amx level splits a large input into blocks of rows whose tiles fit in L2
// (matmul_tile_block_rows): rows in the second and third block must get the bits they get alone.
TEST(matmul_tile_row_blocks_leave_each_row_its_bits) {
  const int64_t K = 4096, N = 40, M = 300;  // 8 groups of 16 rows per 1 MiB block: 3 blocks
  CHECK(s3::cpu::matmul_tile_block_rows(K, M) < M);
  s3::ThreadPool one(1), two(2);
  for (const s3::cpu::MatmulKernels* kernels : bf16_product_kernels()) {
    if (!kernels->packs_input_into_tiles) continue;
    for (DType dtype : {DType::BF16, DType::F8_E4M3}) {
      const RandomWeight w(dtype, N, K, 17);
      const std::vector<float> x = random_input(M, K, 18);
      std::vector<float> batched(size_t(M * N));
      s3::cpu::matmul_forward(batched.data(), x.data(), w.view, M, two, *kernels);
      for (int64_t m : {0, 127, 128, 150, 255, 256, 299}) {
        std::vector<float> alone(static_cast<size_t>(N));
        s3::cpu::matmul_forward(alone.data(), &x[size_t(m * K)], w.view, 1, one, *kernels);
        CHECK(std::equal(alone.begin(), alone.end(), batched.begin() + m * N));
      }
      check_against_f64_products(batched, rounded_to_bf16(x), w, M, N, K);
    }
  }
}

TEST(matmul_fused_pass_equals_one_pass_per_weight) {
  s3::ThreadPool one(1), two(2), three(3);
  const int64_t K = 200, rows[] = {70, 33, 17};
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (DType dtype : kWeightTypes) {
      const RandomWeight w[] = {{dtype, rows[0], K, 7}, {dtype, rows[1], K, 8}, {dtype, rows[2], K, 9}};
      for (int64_t M : {1, 3, 9}) {
        const std::vector<float> x = random_input(M, K, uint64_t(M));
        for (s3::ThreadPool* pool : {&one, &two, &three}) {
          std::vector<float> separate[3], fused[3];
          s3::cpu::MatmulOutput outputs[3];
          for (int i = 0; i < 3; i++) {
            separate[i].resize(size_t(M * rows[i]));
            fused[i].assign(size_t(M * rows[i]), -1.0f);
            s3::cpu::matmul_forward(separate[i].data(), x.data(), w[i].view, M, *pool, kernels);
            outputs[i] = {fused[i].data(), &w[i].view};
          }
          s3::cpu::matmul_forward(outputs, 3, x.data(), M, *pool, kernels);
          for (int i = 0; i < 3; i++) CHECK(fused[i] == separate[i]);
        }
      }
    }
  }
}

TEST(matmul_fp8_dequantizes_every_code_with_its_block_scale) {
  // Every E4M3 code except the NaNs (0x7F, 0xFF) in a 2 × 3 grid of blocks with distinct scales,
  // 130 × 300 so neither dimension is a multiple of 128; an identity-like input picks out columns.
  const int64_t N = 130, K = 300;
  std::vector<uint8_t> codes(size_t(N * K));
  for (size_t i = 0; i < codes.size(); i++) {
    codes[i] = uint8_t(i * 7 % 256);
    if ((codes[i] & 0x7F) == 0x7F) codes[i] = 0x00;
  }
  const float scales[] = {0.5f, 3.0f, 1.0f / 1024.0f, 7.25f, 1e-6f, 448.0f};
  const MatrixView w{codes.data(), DType::F8_E4M3, N, K, scales};
  // Row i of the input is one-hot at ks[i]; 8 rows take the packed-panel path, 1 row the direct one.
  const int64_t ks[] = {0, 1, 127, 128, 200, 255, 256, 299};
  std::vector<float> x(size_t(8 * K), 0.0f);
  for (int64_t i = 0; i < 8; i++) x[size_t(i * K + ks[i])] = 1.0f;
  s3::ThreadPool pool(2);
  for (s3::SimdLevel level : runnable_levels_with_bf16()) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(level);
    for (int64_t M : {1, 8}) {
      std::vector<float> out(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w, M, pool, kernels);
      for (int64_t i = 0; i < M; i++) {
        for (int64_t n = 0; n < N; n++) {
          const float expected = s3::fp8e4m3_to_f32(codes[size_t(n * K + ks[i])]) * scales[(n / 128) * 3 + ks[i] / 128];
          CHECK_EQ(out[size_t(i * N + n)], expected);
          CHECK_EQ(s3::cpu::matrix_element(w, n, ks[i]), expected);
        }
      }
    }
  }
}

// The BF16 level's error is only f32 accumulation once the input is rounded to BF16 (a BF16 or
// FP8-widened product is exact in f32, FP8 block scales are applied in f32 per 128-wide k block):
// against a double reference on the rounded input, the same 1e-6 × Σ|x·w| as the f32 levels.
TEST(matmul_bf16_matches_double_reference_on_bf16_rounded_input) {
  skip_without_bf16();
  s3::ThreadPool pool(2);
  for (const s3::cpu::MatmulKernels* level : bf16_product_kernels()) {
  const s3::cpu::MatmulKernels& kernels = *level;
  CHECK(kernels.rounds_input_to_bf16);
  for (DType dtype : kBf16ProductTypes) {
    for (const auto& shape : kBf16Shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const RandomWeight w(dtype, N, K, uint64_t(N * 1000 + K));
      const std::vector<float> x = random_input(M, K, uint64_t(M));
      const std::vector<float> xr = rounded_to_bf16(x);
      std::vector<float> out(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, kernels);
      check_against_f64_products(out, xr, w, M, N, K);
    }
  }
  }
}

// Against the exact f32 path: rounding each input to BF16 moves it by at most 2⁻⁹ of itself, so
// the results differ by at most 2⁻⁹ Σ|x·w| plus both paths' f32 accumulation; the stated
// tolerance is 2⁻⁸ Σ|x·w|. And they do differ somewhere: the BF16 products really ran.
TEST(matmul_bf16_stays_within_bf16_rounding_of_the_f32_path) {
  skip_without_bf16();
  s3::ThreadPool pool(2);
  const s3::cpu::MatmulKernels& f32 = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512);
  for (const s3::cpu::MatmulKernels* level : bf16_product_kernels()) {
  const s3::cpu::MatmulKernels& bf16 = *level;
  for (DType dtype : kBf16ProductTypes) {
    int64_t differing = 0;
    for (const auto& shape : kBf16Shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const RandomWeight w(dtype, N, K, uint64_t(N * 1000 + K));
      const std::vector<float> x = random_input(M, K, uint64_t(M));
      std::vector<float> out(size_t(M * N)), reference(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, bf16);
      s3::cpu::matmul_forward(reference.data(), x.data(), w.view, M, pool, f32);
      for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
          double magnitude = 0.0;
          for (int64_t k = 0; k < K; k++) magnitude += std::fabs(double(x[size_t(m * K + k)]) * w.values[size_t(n * K + k)]);
          const size_t i = size_t(m * N + n);
          CHECK_NEAR(out[i], reference[i], std::ldexp(magnitude, -8) + 1e-30);
          differing += out[i] != reference[i];
        }
      }
    }
    CHECK(differing > 0);
  }
  }
}

TEST(matmul_bf16_level_keeps_the_exact_f32_path_for_f32_and_f16_weights) {
  skip_without_bf16();
  s3::ThreadPool pool(2);
  const s3::cpu::MatmulKernels& f32 = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512);
  for (const s3::cpu::MatmulKernels* level : bf16_product_kernels()) {
  const s3::cpu::MatmulKernels& bf16 = *level;
  for (DType dtype : {DType::F32, DType::F16}) {
    for (const auto& shape : kBf16Shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const RandomWeight w(dtype, N, K, uint64_t(N * 1000 + K));
      const std::vector<float> x = random_input(M, K, uint64_t(M));
      std::vector<float> out(size_t(M * N)), reference(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, bf16);
      s3::cpu::matmul_forward(reference.data(), x.data(), w.view, M, pool, f32);
      CHECK(out == reference);
    }
  }
  }
}

// Batch and thread invariance at the BF16 level on the edge sizes of K (below one step, off the
// step, off the scale block) and on a long K with many row tiles (M = 70, K = 4096): every row
// alone equals its row in the batch, at 1, 2 and 3 threads.
TEST(matmul_bf16_rows_do_not_depend_on_batch_or_threads_at_edge_sizes) {
  skip_without_bf16();
  s3::ThreadPool one(1), two(2), three(3);
  const int64_t N = 23;
  const int64_t shapes[][2] = {{11, 1}, {11, 15}, {11, 33}, {11, 130}, {70, 4096}};  // M, K
  for (const s3::cpu::MatmulKernels* level : bf16_product_kernels()) {
  const s3::cpu::MatmulKernels& kernels = *level;
  for (DType dtype : kBf16ProductTypes) {
    for (const auto& shape : shapes) {
      const int64_t M = shape[0], K = shape[1];
      const RandomWeight w(dtype, N, K, uint64_t(K));
      const std::vector<float> x = random_input(M, K, uint64_t(K + 1));
      std::vector<float> batched(size_t(M * N));
      s3::cpu::matmul_forward(batched.data(), x.data(), w.view, M, two, kernels);
      for (s3::ThreadPool* pool : {&one, &two, &three}) {
        std::vector<float> threaded(size_t(M * N));
        s3::cpu::matmul_forward(threaded.data(), x.data(), w.view, M, *pool, kernels);
        CHECK(threaded == batched);
        for (int64_t m = 0; m < M; m++) {
          std::vector<float> alone(static_cast<size_t>(N));
          s3::cpu::matmul_forward(alone.data(), &x[size_t(m * K)], w.view, 1, *pool, kernels);
          CHECK(std::equal(alone.begin(), alone.end(), batched.begin() + m * N));
        }
      }
    }
  }
}
}

// The tile model against the hardware. The model sums each output's products in the SDM's order
// for TDPBF16PS with one rounding per addition; the first run on AMX hardware (the H200 host's Xeon,
// 2026-12-04) gave different bits, so the hardware accumulates in an order or precision of its own.
// Each is checked against the exact sum above (within 1e-6 of Σ|x·w|), so here they must agree to
// 2e-6 of Σ|x·w|, which still catches a product missing, doubled or taken from the wrong tile; the
// count of differing outputs and the largest difference are printed for the record. Without AMX this
// cannot run and skips.
TEST(matmul_amx_hardware_agrees_with_its_tile_model) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Amx) {
    SKIP("this CPU has no AMX-BF16 (or the kernel refused tile data): the amx level only compiled here");
  }
  s3::ThreadPool pool(2);
  const s3::cpu::MatmulKernels& hardware = *s3::cpu::matmul_kernels_for(s3::SimdLevel::Amx);
  for (DType dtype : kBf16ProductTypes) {
    int64_t outputs = 0, differing = 0;
    double largest = 0.0;  // |hardware − model| / Σ|x·w|
    for (const auto& shape : kBf16Shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const RandomWeight w(dtype, N, K, uint64_t(N * 1000 + K));
      const std::vector<float> x = random_input(M, K, uint64_t(M));
      const std::vector<float> xr = rounded_to_bf16(x);
      std::vector<float> out(size_t(M * N)), model(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, hardware);
      s3::cpu::matmul_forward(model.data(), x.data(), w.view, M, pool, s3::cpu::kMatmulAmxModel);
      for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
          double magnitude = 0.0;
          for (int64_t k = 0; k < K; k++) magnitude += std::fabs(double(xr[size_t(m * K + k)]) * w.values[size_t(n * K + k)]);
          const double difference = std::fabs(double(out[size_t(m * N + n)]) - double(model[size_t(m * N + n)]));
          outputs++;
          differing += difference != 0.0;
          if (magnitude > 0.0) largest = s3test::max_or_nan(largest, difference / magnitude);
          CHECK_NEAR(out[size_t(m * N + n)], model[size_t(m * N + n)], 2e-6 * magnitude + 1e-30);
        }
      }
    }
    std::printf("  amx %s: hardware and model differ at %lld of %lld outputs, at most %.3g of sum |x w|\n",
                dtype == DType::BF16 ? "bf16" : "fp8", (long long)differing, (long long)outputs, largest);
  }
}

// Each SIMD level's summation order, emulated in scalar code: an output's lane l accumulates the
// products at k ≡ l (mod lanes) in increasing k with one fused multiply-add each (avx512bf16: the
// pair k ≡ 2l, 2l + 1 (mod 32) per step; BF16 products are exact in f32), then the lanes are added
// by the fixed tree, lane i + lane i + lanes/2 first. The kernels reduce many accumulators at once
// by transposing as they add (cpu/sum_lanes_avx512.h, sum_lanes_avx2.h); this pins that every
// output still has the one order's bits, on shapes across the register tiles' edges. Intel
// documents VDPBF16PS as adding the odd product of a pair first (so does Zen 5, measured); a CPU
// that adds them the other way round is accepted if every output then matches, and says so.
float emulated_dot(const float* x, const float* w, int64_t K, int lanes, int per_lane, bool odd_first) {
  std::vector<float> acc(size_t(lanes), 0.0f);
  const int64_t step = int64_t(lanes) * per_lane;
  for (int64_t k0 = 0; k0 < K; k0 += step) {
    for (int l = 0; l < lanes; l++) {
      for (int i = 0; i < per_lane; i++) {
        const int64_t k = k0 + int64_t(l) * per_lane + (odd_first ? per_lane - 1 - i : i);
        if (k < K) acc[size_t(l)] = std::fma(x[k], w[k], acc[size_t(l)]);
      }
    }
  }
  for (int width = lanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; l++) acc[size_t(l)] += acc[size_t(l + width)];
  }
  return acc[0];
}

TEST(matmul_simd_levels_sum_in_their_documented_order) {
  s3::ThreadPool pool(2);
  struct Order {
    s3::SimdLevel level;
    int lanes, per_lane;
    bool rounds_input;
  };
  std::vector<Order> orders;
  const s3::SimdLevel best = s3::cpu_info().supported_level;
  if (best >= s3::SimdLevel::Avx2) orders.push_back({s3::SimdLevel::Avx2, 8, 1, false});
  if (best >= s3::SimdLevel::Avx512) orders.push_back({s3::SimdLevel::Avx512, 16, 1, false});
  if (best >= s3::SimdLevel::Avx512Bf16) orders.push_back({s3::SimdLevel::Avx512Bf16, 16, 2, true});
  if (orders.empty()) SKIP("this CPU has no AVX2: only the scalar level runs here");
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 7, 33}, {5, 13, 64}, {4, 6, 100}, {9, 25, 129}, {17, 31, 1024}};  // M, N, K
  for (const Order& order : orders) {
    const s3::cpu::MatmulKernels& kernels = *s3::cpu::matmul_kernels_for(order.level);
    // Outputs that differ from the emulation with the odd product first, and with the even first.
    int64_t differing[2] = {0, 0};
    for (const auto& shape : shapes) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const RandomWeight w(DType::BF16, N, K, uint64_t(N + K));
      const std::vector<float> x = random_input(M, K, uint64_t(M + K));
      const std::vector<float> multiplied = order.rounds_input ? rounded_to_bf16(x) : x;
      std::vector<float> out(size_t(M * N));
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, kernels);
      std::vector<float> row(static_cast<size_t>(K));
      for (int64_t n = 0; n < N; n++) {
        for (int64_t k = 0; k < K; k++) row[size_t(k)] = float(w.values[size_t(n * K + k)]);
        for (int64_t m = 0; m < M; m++) {
          for (int odd_first = 0; odd_first < 2; odd_first++) {
            const float expected =
                emulated_dot(&multiplied[size_t(m * K)], row.data(), K, order.lanes, order.per_lane, odd_first == 1);
            differing[1 - odd_first] += out[size_t(m * N + n)] != expected;
          }
        }
      }
    }
    if (differing[0] != 0) {
      std::printf("  %s: %lld outputs differ from the documented order (%lld with the even product first)\n",
                  s3::simd_level_name(order.level), (long long)differing[0], (long long)differing[1]);
    }
    if (order.per_lane == 1) {
      CHECK_EQ(differing[0], int64_t(0));  // one product per lane step: both emulations are the same
    } else {
      CHECK(differing[0] == 0 || differing[1] == 0);
    }
  }
}
