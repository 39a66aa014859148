// The BF16-product C (+)= A·B of the trainer's bf16 mode (native/cpu/matmul_nn_bf16) at every SIMD
// level this machine runs, avx512bf16 included when the CPU has AVX512-BF16: against a double
// reference on BF16-rounded operands over the edge shapes of test_cpu_matmul_nn.cpp (row, vector,
// panel and k-block tails, odd K), A read transposed, accumulation into C; bit-exactness where the
// arithmetic is specified (the portable path is the FMA chain on rounded operands; VDPBF16PS adds a
// pair's odd product, then its even one); and determinism: the bits do not depend on the thread
// count, on which rows share the call (batch invariance) or on how the columns are split.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/aligned_allocator.h"
#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/matmul_backward.h"
#include "cpu/matmul_nn_bf16.h"
#include "tests/simd_levels.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

using s3::SimdLevel;
using s3::cpu::MatmulNnArgs;


float bf16(float x) { return s3::bf16_to_f32(s3::f32_to_bf16(x)); }

std::vector<float> rounded(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = bf16(v[i]);
  return out;
}

// A stored [K × M] (read through a_row = 1, a_col = M) when transposed, else [M × K].
struct Operands {
  std::vector<float> a, at, b;
  int64_t M, N, K;
  Operands(int64_t M_, int64_t N_, int64_t K_, uint64_t seed) : M(M_), N(N_), K(K_) {
    a = normal_values(size_t(M * K), seed);
    b = normal_values(size_t(K * N), seed + 1);
    at.resize(a.size());
    for (int64_t i = 0; i < M; i++) {
      for (int64_t k = 0; k < K; k++) at[size_t(k * M + i)] = a[size_t(i * K + k)];
    }
  }
  MatmulNnArgs args(float* c, bool transposed, bool accumulate) const {
    MatmulNnArgs p = s3::cpu::matmul_nn_args(c, transposed ? at.data() : a.data(), b.data(), M, N, K, accumulate);
    if (transposed) {
      p.a_row = 1;
      p.a_col = M;
    }
    return p;
  }
};

const int64_t kShapes[][3] = {{1, 1, 1},     {5, 17, 3},   {6, 64, 32},        {13, 100, 300},
                              {7, 33, 257},  {3, 20, 513}, {64, 2048 + 5, 32}, {2, 5, 0}};

// The products are exact in f32 and the reference takes the same rounded operands, so only the f32
// rounding of the sums separates them: the f32 tolerance of test_cpu_matmul_nn.cpp. Against the
// unrounded operands the results must differ by BF16 rounding: each operand is off by at most
// 2⁻⁹ relative, a product by 2⁻⁸, so |C − C_f32| ≤ 2⁻⁸ Σ|a·b| (+ the f32 term), and on these random
// shapes by more than 2⁻¹⁶ Σ|a·b| somewhere (that is, the operands really were rounded).
// Every level this machine runs with BF16 products of its own: runnable_levels_with_bf16(), and amx
// (its tile kernel) where the CPU has AMX.
// The tile tables this CPU runs: the software model always, the hardware tiles where it has AMX.
std::vector<const s3::cpu::MatmulNnBf16Kernels*> tile_tables() {
  std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables = {&s3::cpu::kMatmulNnAmxModel};
  if (s3::cpu_info().supported_level >= SimdLevel::Amx) tables.push_back(&s3::cpu::kMatmulNnAmx);
  return tables;
}

std::vector<SimdLevel> levels_with_tiles() {
  std::vector<SimdLevel> levels = s3::tests::runnable_levels_with_bf16();
  if (s3::cpu_info().supported_level >= SimdLevel::Amx) levels.push_back(SimdLevel::Amx);
  return levels;
}

// run(args) computes C (+)= A·B with some level's or table's BF16 products; checked against the
// double reference as described above.
template <typename Run>
void check_against_the_reference(const Run& run) {
  for (const auto& shape : kShapes) {
      const Operands op(shape[0], shape[1], shape[2], 11);
      const std::vector<float> ar = rounded(op.a), br = rounded(op.b);
      const std::vector<float> c0 = normal_values(size_t(op.M * op.N), 3);
      for (int transposed = 0; transposed < 2; transposed++) {
        for (int accumulate = 0; accumulate < 2; accumulate++) {
          std::vector<float> c = c0;
          run(op.args(c.data(), transposed != 0, accumulate != 0));
          double largest_rounding_effect = 0.0;
          for (int64_t i = 0; i < op.M; i++) {
            for (int64_t n = 0; n < op.N; n++) {
              const double start = accumulate ? double(c0[size_t(i * op.N + n)]) : 0.0;
              double want = start, unrounded = start, scale = std::fabs(start);
              for (int64_t k = 0; k < op.K; k++) {
                const double product = double(ar[size_t(i * op.K + k)]) * double(br[size_t(k * op.N + n)]);
                want += product;
                unrounded += double(op.a[size_t(i * op.K + k)]) * double(op.b[size_t(k * op.N + n)]);
                scale += std::fabs(product);
              }
              const double got = double(c[size_t(i * op.N + n)]);
              CHECK_NEAR(got, want, 1e-5 * scale + 1e-6);
              CHECK_NEAR(got, unrounded, 0x1p-8 * scale + 1e-5 * scale + 1e-6);
              if (scale > 0.0) largest_rounding_effect = std::fmax(largest_rounding_effect, std::fabs(got - unrounded) / scale);
            }
          }
          if (op.K >= 32) CHECK(largest_rounding_effect > 0x1p-16);
        }
      }
  }
}

TEST(matmul_nn_bf16_matches_the_reference_on_rounded_operands_at_every_level) {
  s3::ThreadPool pool(2);
  for (SimdLevel level : levels_with_tiles()) {
    check_against_the_reference([&](const MatmulNnArgs& args) { s3::cpu::matmul_nn_bf16(args, pool, level); });
  }
}

// The amx level's tile kernel (matmul_nn_amx_kernel.h) over the software tile model, on every CPU
// with AVX512-BF16: its packing (A transposed into rows, padding of M, K and N), 32 × 32 blocks,
// super-columns, edges and accumulation, against the reference; where the CPU has AMX, the hardware
// against the model (they may differ in the last bits of a sum: the model adds a pair's two
// products one after the other, as the SDM states it; the forward's tile test measures the same).
TEST(matmul_nn_bf16_tile_kernel_matches_the_reference_on_the_tile_model) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the tile model is compiled for it");
  s3::ThreadPool pool(2);
  check_against_the_reference([&](const MatmulNnArgs& args) { s3::cpu::matmul_nn_bf16(args, pool, s3::cpu::kMatmulNnAmxModel); });
  if (s3::cpu_info().supported_level < SimdLevel::Amx) return;
  for (int transposed = 0; transposed < 2; transposed++) {
    const Operands op(45, 150, 333, 61);
    std::vector<float> model(size_t(op.M * op.N)), hardware(model.size());
    s3::cpu::matmul_nn_bf16(op.args(model.data(), transposed != 0, false), pool, s3::cpu::kMatmulNnAmxModel);
    s3::cpu::matmul_nn_bf16(op.args(hardware.data(), transposed != 0, false), pool, s3::cpu::kMatmulNnAmx);
    int64_t differ = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < op.M; i++) {
      for (int64_t n = 0; n < op.N; n++) {
        double scale = 0.0;
        for (int64_t k = 0; k < op.K; k++) scale += std::fabs(double(bf16(op.a[size_t(i * op.K + k)])) * double(bf16(op.b[size_t(k * op.N + n)])));
        const double d = std::fabs(double(model[size_t(i * op.N + n)]) - double(hardware[size_t(i * op.N + n)]));
        differ += d != 0.0;
        worst = std::fmax(worst, d / scale);
      }
    }
    std::printf("  amx matmul_nn%s: hardware and model differ at %lld of %lld outputs, at most %.3g of sum |a b|\n",
                transposed ? " (A transposed)" : "", (long long)differ, (long long)(op.M * op.N), worst);
    CHECK(worst < 1e-6);
  }
}

// Past 4,096 values of k (the LM head's products, K = the vocabulary) the tile kernel runs k in
// chunks, writing C between them: C holds each sum exactly in f32, so one call gives the bits of
// the same product split by hand at a chunk boundary (the first 4,096 values, then the rest added
// into C). On the tile model everywhere with AVX512-BF16, and on the hardware where there is AMX.
TEST(matmul_nn_bf16_tile_kernel_chunks_of_k_keep_each_sum_chain) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the tile model is compiled for it");
  s3::ThreadPool pool(2);
  const std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables = tile_tables();
  const int64_t M = 35, N = 70, K = 4096 + 1000, split = 4096;
  const std::vector<float> a = normal_values(size_t(M * K), 71), b = normal_values(size_t(K * N), 72);
  for (const s3::cpu::MatmulNnBf16Kernels* table : tables) {
    std::vector<float> whole(size_t(M * N)), parts(whole.size());
    s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(whole.data(), a.data(), b.data(), M, N, K, false), pool, *table);
    MatmulNnArgs first = s3::cpu::matmul_nn_args(parts.data(), a.data(), b.data(), M, N, split, false);
    first.a_row = K;
    s3::cpu::matmul_nn_bf16(first, pool, *table);
    MatmulNnArgs rest = s3::cpu::matmul_nn_args(parts.data(), a.data() + split, b.data() + split * N, M, N, K - split, true);
    rest.a_row = K;
    s3::cpu::matmul_nn_bf16(rest, pool, *table);
    CHECK(std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)) == 0);
  }
}

// B packed once (the LM head's dh = dlogits · head, one product per chunk of rows) gives each
// product the bits of the call that packs B itself, at each level with BF16 kernels (A as rows or
// transposed, C overwritten or accumulated); a B packed for other K or N is refused.
TEST(matmul_nn_bf16_on_a_packed_b_gives_the_bits_of_packing_per_call) {
  s3::ThreadPool pool(2);
  std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables;
  for (SimdLevel level : levels_with_tiles()) {
    if (const s3::cpu::MatmulNnBf16Kernels* k = s3::cpu::matmul_nn_bf16_kernels_for(level)) tables.push_back(k);
  }
  if (s3::cpu_info().supported_level >= SimdLevel::Avx512Bf16) tables.push_back(&s3::cpu::kMatmulNnAmxModel);
  if (tables.empty()) SKIP("this CPU has no BF16 kernels (below avx512bf16)");
  for (const s3::cpu::MatmulNnBf16Kernels* table : tables) {
    const Operands op(37, 70, 301, 81);
    s3::cpu::MatmulNnBf16PackedB packed;
    s3::cpu::matmul_nn_bf16_pack_b(packed, op.b.data(), op.N, op.K, op.N, *table, pool);
    for (int transposed = 0; transposed < 2; transposed++) {
      for (int accumulate = 0; accumulate < 2; accumulate++) {
        const std::vector<float> c0 = normal_values(size_t(op.M * op.N), 82);
        std::vector<float> want = c0, got = c0;
        s3::cpu::matmul_nn_bf16(op.args(want.data(), transposed != 0, accumulate != 0), pool, *table);
        s3::cpu::matmul_nn_bf16(op.args(got.data(), transposed != 0, accumulate != 0), packed, pool);
        CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
      }
    }
    std::vector<float> c(size_t(op.M * op.N));
    MatmulNnArgs other_k = op.args(c.data(), false, false);
    other_k.K = op.K - 1;
    bool refused = false;
    try {
      s3::cpu::matmul_nn_bf16(other_k, packed, pool);
    } catch (const std::invalid_argument& e) {
      refused = std::string(e.what()).find("K = 301") != std::string::npos;
    }
    CHECK(refused);
  }
}

// The portable path (every level below avx512bf16) is the level's f32 FMA chain on the rounded
// operands; at the scalar level that is std::fma in increasing k, bit for bit.
TEST(matmul_nn_bf16_scalar_level_is_the_fma_chain_on_rounded_operands) {
  s3::ThreadPool pool(1);
  const Operands op(9, 37, 129, 21);
  const std::vector<float> ar = rounded(op.a), br = rounded(op.b);
  std::vector<float> c(size_t(op.M * op.N));
  s3::cpu::matmul_nn_bf16(op.args(c.data(), true, false), pool, SimdLevel::Scalar);
  for (int64_t i = 0; i < op.M; i++) {
    for (int64_t n = 0; n < op.N; n++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < op.K; k++) acc = std::fma(ar[size_t(i * op.K + k)], br[size_t(k * op.N + n)], acc);
      CHECK_EQ(c[size_t(i * op.N + n)], acc);
    }
  }
}

// VDPBF16PS as the Intel SDM specifies it (seen on AMD Zen 4 too): per pair, the lane adds the odd
// k's product, then the even k's, each add rounded to nearest even (the products are exact). The
// kernel's chain is that over the pairs in increasing k, from C when accumulating; checked for A
// packed as rows and pair-interleaved (read transposed).
void check_pairwise_chain_of_vdpbf16ps(int64_t M, int64_t N, int64_t K, s3::ThreadPool& pool) {
  const Operands op(M, N, K, 31);
  const std::vector<float> ar = rounded(op.a), br = rounded(op.b);
  const std::vector<float> c0 = normal_values(size_t(op.M * op.N), 4);
  for (int transposed = 0; transposed < 2; transposed++) {
    std::vector<float> c = c0;
    s3::cpu::matmul_nn_bf16(op.args(c.data(), transposed != 0, true), pool, SimdLevel::Avx512Bf16);
    for (int64_t i = 0; i < op.M; i++) {
      for (int64_t n = 0; n < op.N; n++) {
        float acc = c0[size_t(i * op.N + n)];
        for (int64_t k = 0; k < op.K; k += 2) {
          const float even = ar[size_t(i * op.K + k)] * br[size_t(k * op.N + n)];
          const float odd = k + 1 < op.K ? ar[size_t(i * op.K + k + 1)] * br[size_t((k + 1) * op.N + n)] : 0.0f;
          acc = (acc + odd) + even;
        }
        CHECK_EQ(c[size_t(i * op.N + n)], acc);
      }
    }
  }
}

TEST(matmul_nn_bf16_avx512bf16_kernel_is_the_pairwise_chain_of_vdpbf16ps) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the avx512bf16 matmul_nn level cannot run here");
  }
  s3::ThreadPool pool(2);
  for (const auto& shape : kShapes) check_pairwise_chain_of_vdpbf16ps(shape[0], shape[1], shape[2], pool);
}

// The kernel takes A's rows in chunks that stay in L2 (at most 512 KiB: 48 rows and more) and
// passes every panel over a chunk before the next. Each element's chain stays the same: chunks
// over all of K (600 rows in chunks of 150, two blocks of k, three panels, the last masked), chunks
// of thousands of rows for a short K (a last tile of one row), and chunks of one block for a K past
// 4,096 (five blocks, the last of 52 pairs).
TEST(matmul_nn_bf16_avx512bf16_row_chunks_keep_each_pairwise_chain) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the avx512bf16 matmul_nn level cannot run here");
  }
  s3::ThreadPool pool(2);
  check_pairwise_chain_of_vdpbf16ps(600, 150, 1100, pool);
  check_pairwise_chain_of_vdpbf16ps(4099, 70, 64, pool);
  check_pairwise_chain_of_vdpbf16ps(300, 70, 4200, pool);
}

// The avx512bf16 level's pair packing rounds exactly as core/dtype.h's f32_to_bf16 (nearest even,
// ties both ways, subnormals kept, NaN made quiet, overflow to inf) and zeroes the missing odd row,
// at every length (vector tails).
TEST(matmul_nn_bf16_pair_packing_rounds_like_f32_to_bf16) {
  const s3::cpu::MatmulNnBf16Kernels* kernels = s3::cpu::matmul_nn_bf16_kernels_for(SimdLevel::Avx512Bf16);
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16 || kernels == nullptr) {
    SKIP("this CPU lacks AVX512-BF16: the avx512bf16 matmul_nn level cannot run here");
  }
  const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu,
                              0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC12345u, 0x00000000u, 0x80000000u};
  std::vector<float> even = normal_values(40, 61), odd = normal_values(40, 62);
  for (size_t i = 0; i < 12; i++) std::memcpy(&even[i * 3], &special[i], 4);
  for (size_t i = 0; i < 12; i++) std::memcpy(&odd[39 - i * 3], &special[i], 4);
  for (int64_t n : {1, 15, 16, 17, 40}) {
    for (int with_odd = 0; with_odd < 2; with_odd++) {
      std::vector<uint16_t> out(size_t(2 * n + 2), 0xBEEF);
      kernels->pack_pairs(even.data(), with_odd ? odd.data() : nullptr, n, out.data());
      for (int64_t j = 0; j < n; j++) {
        CHECK_EQ(out[size_t(2 * j)], s3::f32_to_bf16(even[size_t(j)]));
        CHECK_EQ(out[size_t(2 * j + 1)], with_odd ? s3::f32_to_bf16(odd[size_t(j)]) : uint16_t(0));
      }
      CHECK_EQ(out[size_t(2 * n)], uint16_t(0xBEEF));  // nothing written past the row
    }
  }
}

// The avx512bf16 level's B in 64-column panels: every value where MatmulNnBf16Args says, (k, n)
// at (n / 64)·b_panel + (k / 2)·ldb + 2(n mod 64) + k mod 2, and zero in every padding place (the
// odd k of an odd K, the columns past N in the last panel), at tails of K and N.
TEST(matmul_nn_bf16_avx512bf16_b_panels_hold_each_pair_where_the_kernel_reads_it) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(2);
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAvx512Bf16;
  for (int64_t K : {1, 2, 7, 64}) {
    for (int64_t N : {1, 16, 63, 64, 65, 130}) {
      const std::vector<float> b = normal_values(size_t(K * (N + 3)), uint32_t(K * 1000 + N));
      s3::cpu::MatmulNnBf16PackedB packed;
      s3::cpu::matmul_nn_bf16_pack_b(packed, b.data(), N + 3, K, N, kernels, pool);  // rows N + 3 apart
      const s3::cpu::MatmulNnBf16Sizes sizes = s3::cpu::matmul_nn_bf16_sizes(kernels, 1, N, K);
      const int64_t pairs = (K + 1) / 2, panels = (N + 63) / 64;
      CHECK_EQ(packed.ldb, int64_t(128));
      CHECK_EQ(packed.panel, pairs * 128);
      CHECK_EQ(sizes.b_values, panels * pairs * 128);
      CHECK(packed.values.size() >= size_t(sizes.b_values));
      int64_t wrong = 0;
      for (int64_t c = 0; c < panels; c++) {
        for (int64_t q = 0; q < pairs; q++) {
          for (int64_t j = 0; j < 64; j++) {
            for (int64_t h = 0; h < 2; h++) {
              const int64_t k = 2 * q + h, n = 64 * c + j;
              const uint16_t want = k < K && n < N ? s3::f32_to_bf16(b[size_t(k * (N + 3) + n)]) : uint16_t(0);
              wrong += packed.values[size_t(c * packed.panel + q * packed.ldb + 2 * j + h)] != want;
            }
          }
        }
      }
      CHECK_EQ(wrong, int64_t(0));
    }
  }
}

// The tile tables' transposed A (the dW products' doutᵀ) packed straight into a row block of
// tiles: each value rounded as f32_to_bf16 (ties, NaN, infinities, subnormals), tile s row i
// holding k = 32 s … 32 s + 31 of row i, zero past K and past the block's rows.
TEST(matmul_nn_bf16_transposed_tile_packing_rounds_like_f32_to_bf16) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAmxModel;
  CHECK(kernels.pack_transposed_block != nullptr);
  const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu,
                              0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC12345u, 0x00000000u, 0x80000000u};
  const int64_t ld = 21, K = 70, steps = 3;  // stored [K × ld]
  std::vector<float> src = normal_values(size_t(K * ld), 63);
  for (size_t i = 0; i < 12; i++) std::memcpy(&src[i * 97], &special[i], 4);
  for (int64_t rows : {16, 7, 0}) {
    s3::CacheLineVector<uint16_t> tiles(size_t(steps * 512), 0xBEEF);
    kernels.pack_transposed_block(src.data() + 3, ld, K, rows, steps, tiles.data());
    for (int64_t s = 0; s < steps; s++) {
      for (int64_t i = 0; i < 16; i++) {
        for (int64_t j = 0; j < 32; j++) {
          const int64_t k = 32 * s + j;
          const uint16_t want = i < rows && k < K ? s3::f32_to_bf16(src[size_t(k * ld + 3 + i)]) : uint16_t(0);
          CHECK_EQ(tiles[size_t(s * 512 + i * 32 + j)], want);
        }
      }
    }
  }
}

// W's rows into the B tiles of Wᵀ: row q of step s holds each column's pair (W[j][32s + 2q],
// W[j][32s + 2q + 1]), every value rounded as f32_to_bf16 (ties, NaN, infinities, subnormals), zero
// past K and past the block's rows.
TEST(matmul_nn_bf16_rows_as_b_tile_packing_rounds_like_f32_to_bf16) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAmxModel;
  CHECK(kernels.pack_rows_as_b_block != nullptr);
  const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu,
                              0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC12345u, 0x00000000u, 0x80000000u};
  const int64_t ldw = 83, K = 75, steps = 4;  // W [16 × ldw], K values per row used
  std::vector<float> w = normal_values(size_t(16 * ldw), 64);
  for (size_t i = 0; i < 12; i++) std::memcpy(&w[i * 101], &special[i], 4);
  for (int64_t rows : {16, 9, 0}) {
    s3::CacheLineVector<uint16_t> tiles(size_t(steps * 512), 0xBEEF);
    kernels.pack_rows_as_b_block(w.data(), ldw, K, rows, steps, tiles.data());
    for (int64_t s = 0; s < steps; s++) {
      for (int64_t q = 0; q < 16; q++) {
        for (int64_t j = 0; j < 16; j++) {
          for (int64_t half = 0; half < 2; half++) {
            const int64_t k = 32 * s + 2 * q + half;
            const uint16_t want = j < rows && k < K ? s3::f32_to_bf16(w[size_t(j * ldw + k)]) : uint16_t(0);
            CHECK_EQ(tiles[size_t(s * 512 + q * 32 + 2 * j + half)], want);
          }
        }
      }
    }
  }
}

// Contiguous A rows straight into their row block of tiles: tile s row i holds k = 32 s … 32 s + 31
// of row i, every value rounded as f32_to_bf16 (ties, NaN, infinities, subnormals), zero past K and
// past the block's rows; and A's three paths into a block (contiguous rows, rows read transposed,
// any strides value by value) lay the same matrix out in the same bits.
TEST(matmul_nn_bf16_row_tile_packing_rounds_like_f32_to_bf16_on_every_path) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAmxModel;
  CHECK(kernels.pack_rows_block != nullptr);
  const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu,
                              0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC12345u, 0x00000000u, 0x80000000u};
  const int64_t ld = 79, K = 71, steps = 3;  // A [16 × ld], K values per row used
  std::vector<float> a = normal_values(size_t(16 * ld), 65);
  for (size_t i = 0; i < 12; i++) std::memcpy(&a[i * 89], &special[i], 4);
  for (int64_t rows : {16, 5, 0}) {
    s3::CacheLineVector<uint16_t> tiles(size_t(steps * 512), 0xBEEF);
    kernels.pack_rows_block(a.data(), ld, K, rows, steps, tiles.data());
    for (int64_t s = 0; s < steps; s++) {
      for (int64_t i = 0; i < 16; i++) {
        for (int64_t j = 0; j < 32; j++) {
          const int64_t k = 32 * s + j;
          const uint16_t want = i < rows && k < K ? s3::f32_to_bf16(a[size_t(i * ld + k)]) : uint16_t(0);
          CHECK_EQ(tiles[size_t(s * 512 + i * 32 + j)], want);
        }
      }
    }
  }
  const int64_t M = 37;  // the second block is partial: rows 16..31 of 37, the third 32..36
  std::vector<float> rows_major = normal_values(size_t(M * K), 66), stored_transposed(size_t(K * M));
  std::vector<float> strided(size_t(M * K * 2));  // element (i, k) at 2 (i + k M): no unit stride
  for (int64_t i = 0; i < M; i++) {
    for (int64_t k = 0; k < K; k++) {
      stored_transposed[size_t(k * M + i)] = rows_major[size_t(i * K + k)];
      strided[size_t(2 * (i + k * M))] = rows_major[size_t(i * K + k)];
    }
  }
  for (int64_t i0 : {0, 16, 32, 48}) {
    s3::CacheLineVector<uint16_t> want(size_t(steps * 512), 0xBEEF), transposed(want.size(), 0xBEEF), any(want.size(), 0xBEEF);
    s3::cpu::matmul_nn_pack_a_tile_block(kernels, rows_major.data(), K, 1, M, K, i0, steps, want.data());
    s3::cpu::matmul_nn_pack_a_tile_block(kernels, stored_transposed.data(), 1, M, M, K, i0, steps, transposed.data());
    s3::cpu::matmul_nn_pack_a_tile_block(kernels, strided.data(), 2, 2 * M, M, K, i0, steps, any.data());
    CHECK(std::memcmp(want.data(), transposed.data(), want.size() * 2) == 0);
    CHECK(std::memcmp(want.data(), any.data(), want.size() * 2) == 0);
    for (int64_t i = 0; i < 16; i++) {  // the block's row i is A's row i0 + i (zero past M)
      const uint16_t first = i0 + i < M ? s3::f32_to_bf16(rows_major[size_t((i0 + i) * K)]) : uint16_t(0);
      CHECK_EQ(want[size_t(i * 32)], first);
    }
  }
}

// A pair row straight into its rows of B tiles: block c's tile row holds the pairs (even[16c + j],
// odd[16c + j]) rounded as f32_to_bf16, zero past count and in the blocks past it; a missing odd
// row gives zero halves, a missing even row a row of zeros; nothing else in the tiles is written.
TEST(matmul_nn_bf16_pair_tile_rows_round_like_f32_to_bf16) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAmxModel;
  CHECK(kernels.pack_pairs_into_tiles != nullptr);
  std::vector<float> even = normal_values(40, 67), odd = normal_values(40, 68);
  const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x00000001u, 0x7F800001u, 0xFF800000u};
  for (size_t i = 0; i < 5; i++) std::memcpy(&even[i * 7], &special[i], 4), std::memcpy(&odd[39 - i * 7], &special[i], 4);
  const int64_t stride = 3 * 512, blocks = 4;  // a row of tiles three tiles apart, as in a 3-step panel
  for (int64_t count : {40, 33, 16, 1}) {
    for (int mode = 0; mode < 3; mode++) {  // both rows, no odd row, no rows
      const float* e = mode < 2 ? even.data() : nullptr;
      const float* o = mode == 0 ? odd.data() : nullptr;
      s3::CacheLineVector<uint16_t> tiles(size_t(blocks * stride), 0xBEEF);
      s3::cpu::matmul_nn_place_pair_tile_row(kernels, e, o, count, tiles.data() + 64, stride, blocks);
      for (int64_t c = 0; c < blocks; c++) {
        for (int64_t j = 0; j < 16; j++) {
          const int64_t n = 16 * c + j;
          const uint16_t want_even = e != nullptr && n < count ? s3::f32_to_bf16(even[size_t(n)]) : uint16_t(0);
          const uint16_t want_odd = o != nullptr && n < count ? s3::f32_to_bf16(odd[size_t(n)]) : uint16_t(0);
          CHECK_EQ(tiles[size_t(64 + c * stride + 2 * j)], want_even);
          CHECK_EQ(tiles[size_t(64 + c * stride + 2 * j + 1)], want_odd);
        }
        CHECK_EQ(tiles[size_t(63 + c * stride)], uint16_t(0xBEEF));
        CHECK_EQ(tiles[size_t(96 + c * stride)], uint16_t(0xBEEF));
      }
    }
  }
}

// A pair row taken from two rows of a packed A (the attention's dS, rounded once for dQ's A and
// moved into dK's B) is the pair row rounded from their f32 values: any two consecutive rows, in
// one 16-row block or across two, with zeros past K and in the blocks past A's row, and nothing
// written outside the row.
TEST(matmul_nn_bf16_pair_tile_row_from_a_rows_is_the_row_rounded_from_f32) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(1);
  const s3::cpu::MatmulNnBf16Kernels& kernels = s3::cpu::kMatmulNnAmxModel;
  for (const int64_t K : {int64_t(70), int64_t(32), int64_t(5)}) {
    const int64_t M = 34;
    std::vector<float> a = normal_values(size_t(M * K), 69);
    const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x00000001u, 0x7F800001u, 0xFF800000u};
    for (size_t i = 0; i < 5; i++) std::memcpy(&a[(i * 13) % a.size()], &special[i], 4);
    s3::cpu::MatmulNnBf16PackedA packed;
    s3::cpu::matmul_nn_bf16_pack_a(packed, a.data(), K, 1, M, K, kernels, pool);
    const int64_t stride = 3 * 512, blocks = (K + 15) / 16 + 2;  // two blocks past A's row (and its padding)
    for (const int64_t i : {int64_t(0), int64_t(15), int64_t(16), int64_t(31), int64_t(32)}) {
      s3::CacheLineVector<uint16_t> want(size_t(blocks * stride), 0xBEEF), got = want;
      s3::cpu::matmul_nn_place_pair_tile_row(kernels, &a[size_t(i * K)], &a[size_t((i + 1) * K)], K, want.data() + 64, stride, blocks);
      s3::cpu::matmul_nn_place_pair_tile_row_from_a(kernels, packed.values.data(), packed.a_row, i, got.data() + 64, stride, blocks);
      CHECK(want == got);
    }
  }
}

// A linear layer's weights packed once as B = Wᵀ (straight from W's rows) give the bits of packing
// an explicit transposed copy per call, every padding value included: on the avx512bf16 panels, on
// the tile model and on the hardware tiles where the CPU has AMX; a table that can pack neither
// refuses.
TEST(matmul_nn_bf16_b_packed_from_w_rows_gives_the_bits_of_packing_w_transposed) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(2);
  std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables = tile_tables();
  tables.push_back(&s3::cpu::kMatmulNnAvx512Bf16);
  for (const s3::cpu::MatmulNnBf16Kernels* table : tables) {
    for (const auto& shape : {std::array<int64_t, 3>{37, 70, 301}, std::array<int64_t, 3>{5, 33, 32}, std::array<int64_t, 3>{64, 16, 1},
                              std::array<int64_t, 3>{7, 130, 33}}) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const std::vector<float> x = normal_values(size_t(M * K), 91), w = normal_values(size_t(N * K), 92);
      std::vector<float> wt(size_t(K * N));
      for (int64_t n = 0; n < N; n++) {
        for (int64_t k = 0; k < K; k++) wt[size_t(k * N + n)] = w[size_t(n * K + k)];
      }
      s3::cpu::MatmulNnBf16PackedB from_rows, from_transposed;
      s3::cpu::matmul_nn_bf16_pack_b_transposed(from_rows, w.data(), K, K, N, *table, pool);
      s3::cpu::matmul_nn_bf16_pack_b(from_transposed, wt.data(), N, K, N, *table, pool);
      const size_t values = size_t(s3::cpu::matmul_nn_bf16_sizes(*table, 1, N, K).b_values);
      CHECK(std::memcmp(from_rows.values.data(), from_transposed.values.data(), values * sizeof(uint16_t)) == 0);
      CHECK_EQ(from_rows.ldb, from_transposed.ldb);
      CHECK_EQ(from_rows.panel, from_transposed.panel);
      std::vector<float> want(size_t(M * N)), got(size_t(M * N));
      s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(want.data(), x.data(), wt.data(), M, N, K, false), pool, *table);
      s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(got.data(), x.data(), nullptr, M, N, K, false), from_rows, pool);
      CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
    }
  }
  s3::cpu::MatmulNnBf16PackedB packed;
  const std::vector<float> w(64, 1.0f);
  const s3::cpu::MatmulNnBf16Kernels bare = {"bare", s3::cpu::kMatmulNnAvx512Bf16.columns, s3::cpu::kMatmulNnAvx512Bf16.pack_pairs};
  bool refused = false;
  try {
    s3::cpu::matmul_nn_bf16_pack_b_transposed(packed, w.data(), 8, 8, 8, bare, pool);
  } catch (const std::invalid_argument& e) {
    refused = std::string(e.what()).find("bare kernels cannot pack B from W's rows") != std::string::npos;
  }
  CHECK(refused);
}

// A packed once serves several products with the bits of packing it per call, and the tiles of Aᵀ
// transposed from A's are the tiles packing Aᵀ from the f32 values gives (every padding value
// included), on the tile model and on the hardware tiles where the CPU has AMX; mismatched
// shapes and tables without the tile layout are refused.
TEST(matmul_nn_bf16_packed_a_and_its_transpose_give_the_bits_of_packing_per_call) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(2);
  const std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables = tile_tables();
  for (const s3::cpu::MatmulNnBf16Kernels* table : tables) {
    for (const auto& shape : {std::array<int64_t, 3>{37, 70, 301}, std::array<int64_t, 3>{64, 33, 32},
                              std::array<int64_t, 3>{1, 16, 17}, std::array<int64_t, 3>{96, 5, 64}}) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      std::vector<float> a = normal_values(size_t(M * K), 93), b = normal_values(size_t(K * N), 94);
      a[0] = std::numeric_limits<float>::infinity();  // rounding's edge values travel through the transposition
      a[size_t(M * K - 1)] = std::nanf("");
      std::vector<float> a_t(size_t(K * M));
      for (int64_t i = 0; i < M; i++) {
        for (int64_t k = 0; k < K; k++) a_t[size_t(k * M + i)] = a[size_t(i * K + k)];
      }
      s3::cpu::MatmulNnBf16PackedA packed, transposed, packed_t;
      s3::cpu::matmul_nn_bf16_pack_a(packed, a.data(), K, 1, M, K, *table, pool);
      s3::cpu::matmul_nn_bf16_transpose_a(transposed, packed, pool);
      s3::cpu::matmul_nn_bf16_pack_a(packed_t, a_t.data(), M, 1, K, M, *table, pool);
      CHECK_EQ(transposed.M, K);
      CHECK_EQ(transposed.K, M);
      CHECK_EQ(transposed.a_row, packed_t.a_row);
      CHECK(std::equal(packed_t.values.begin(), packed_t.values.end(), transposed.values.begin()));
      // Aᵀ read through its strides packs to the same tiles.
      s3::cpu::MatmulNnBf16PackedA strided;
      s3::cpu::matmul_nn_bf16_pack_a(strided, a.data(), 1, K, K, M, *table, pool);
      CHECK(std::equal(packed_t.values.begin(), packed_t.values.end(), strided.values.begin()));

      a[0] = 1.0f;
      a[size_t(M * K - 1)] = -2.0f;
      s3::cpu::matmul_nn_bf16_pack_a(packed, a.data(), K, 1, M, K, *table, pool);
      s3::cpu::MatmulNnBf16PackedB packed_b;
      s3::cpu::matmul_nn_bf16_pack_b(packed_b, b.data(), N, K, N, *table, pool);
      for (const bool accumulate : {false, true}) {
        std::vector<float> want = normal_values(size_t(M * N), 95), got = want;
        s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(want.data(), a.data(), b.data(), M, N, K, accumulate), pool, *table);
        s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(got.data(), nullptr, nullptr, M, N, K, accumulate), packed, packed_b, pool);
        CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
      }
    }
  }
  s3::cpu::MatmulNnBf16PackedA a8;
  s3::cpu::MatmulNnBf16PackedB b8;
  const std::vector<float> ones(64, 1.0f);
  s3::cpu::matmul_nn_bf16_pack_a(a8, ones.data(), 8, 1, 8, 8, s3::cpu::kMatmulNnAmxModel, pool);
  s3::cpu::matmul_nn_bf16_pack_b(b8, ones.data(), 8, 8, 8, s3::cpu::kMatmulNnAmxModel, pool);
  std::vector<float> c(64);
  const auto refused = [&](const std::function<void()>& call, const char* words) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find(words) != std::string::npos;
    }
    return false;
  };
  CHECK(refused([&] { s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(c.data(), nullptr, nullptr, 8, 8, 7, false), a8, b8, pool); },
                "used for M = 8, K = 7"));
  CHECK(refused([&] { s3::cpu::matmul_nn_bf16_pack_a(a8, ones.data(), 8, 1, 8, 8, s3::cpu::kMatmulNnAvx512Bf16, pool); },
                "tile layout"));
}

// A linear layer's backward on tiles (dout packed once, doutᵀ transposed from its tiles, inp packed
// by the call or by the caller) gives the bits of its two products packed per call: dinp = dout · W
// and dweight += doutᵀ · inp, each alone or both.
TEST(matmul_backward_on_tiles_gives_the_bits_of_its_products_packed_per_call) {
  if (s3::cpu_info().supported_level < SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(2);
  const std::vector<const s3::cpu::MatmulNnBf16Kernels*> tables = tile_tables();
  for (const s3::cpu::MatmulNnBf16Kernels* table : tables) {
    for (const auto& shape : {std::array<int64_t, 3>{37, 70, 45}, std::array<int64_t, 3>{64, 32, 96}}) {
      const int64_t M = shape[0], N = shape[1], K = shape[2];
      const std::vector<float> dout = normal_values(size_t(M * N), 96), inp = normal_values(size_t(M * K), 97),
                               w = normal_values(size_t(N * K), 98), dw0 = normal_values(size_t(N * K), 99);
      std::vector<float> want_dinp(size_t(M * K)), want_dw = dw0;
      s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(want_dinp.data(), dout.data(), w.data(), M, K, N, false), pool, *table);
      s3::cpu::MatmulNnArgs dw_args = s3::cpu::matmul_nn_args(want_dw.data(), dout.data(), inp.data(), N, K, M, true);
      dw_args.a_row = 1;
      dw_args.a_col = N;
      s3::cpu::matmul_nn_bf16(dw_args, pool, *table);
      s3::cpu::MatmulNnBf16PackedB w_tiles, inp_pairs;
      s3::cpu::matmul_nn_bf16_pack_b(w_tiles, w.data(), K, N, K, *table, pool);
      s3::cpu::matmul_nn_bf16_pack_b(inp_pairs, inp.data(), K, M, K, *table, pool);
      for (int call = 0; call < 2; call++) {
        for (const int which : {1, 2, 3}) {  // dinp, dweight, both
          std::vector<float> dinp(size_t(M * K), -1.0f), dw = dw0;
          float* dinp_out = (which & 1) != 0 ? dinp.data() : nullptr;
          float* dw_out = (which & 2) != 0 ? dw.data() : nullptr;
          if (call == 0) {
            s3::cpu::matmul_backward(dinp_out, dw_out, dout.data(), inp.data(), M, N, K, pool, w_tiles);
          } else {
            s3::cpu::matmul_backward(dinp_out, dw_out, dout.data(), M, N, K, pool, w_tiles, inp_pairs);
          }
          CHECK(dinp_out == nullptr ? dinp == std::vector<float>(dinp.size(), -1.0f)
                                    : std::memcmp(dinp.data(), want_dinp.data(), dinp.size() * sizeof(float)) == 0);
          CHECK(dw_out == nullptr ? dw == dw0 : std::memcmp(dw.data(), want_dw.data(), dw.size() * sizeof(float)) == 0);
        }
      }
    }
  }
}

// Same bits with 1 or 2 threads, for the rows alone or in a batch, and for any split of the columns
// (a column range computed as its own product), at each level.
TEST(matmul_nn_bf16_bits_do_not_depend_on_threads_batch_or_column_split) {
  s3::ThreadPool pool1(1), pool2(2);
  for (SimdLevel level : levels_with_tiles()) {
    for (int transposed = 0; transposed < 2; transposed++) {
      const Operands op(37, 200, 601, 41);
      std::vector<float> one(size_t(op.M * op.N)), two(one.size());
      s3::cpu::matmul_nn_bf16(op.args(one.data(), transposed != 0, false), pool1, level);
      s3::cpu::matmul_nn_bf16(op.args(two.data(), transposed != 0, false), pool2, level);
      CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
      // Row i alone (M = 1): the same bits as in the batch of 37.
      for (int64_t i : {0, 5, 36}) {
        std::vector<float> row(size_t(op.N));
        MatmulNnArgs args = s3::cpu::matmul_nn_args(row.data(), op.a.data() + i * op.K, op.b.data(), 1, op.N, op.K, false);
        s3::cpu::matmul_nn_bf16(args, pool2, level);
        CHECK(std::memcmp(row.data(), one.data() + i * op.N, row.size() * sizeof(float)) == 0);
      }
      // Columns [n0, n1) as a product of their own (B's columns through ldb, C's through ldc).
      const int64_t cuts[] = {0, 7, 23, 100, 101, op.N};
      std::vector<float> pieces(one.size());
      for (int piece = 0; piece + 1 < 6; piece++) {
        const int64_t n0 = cuts[piece], n1 = cuts[piece + 1];
        MatmulNnArgs args = op.args(pieces.data() + n0, transposed != 0, false);
        args.b = op.b.data() + n0;
        args.N = n1 - n0;
        s3::cpu::matmul_nn_bf16(args, pool2, level);
      }
      CHECK(std::memcmp(one.data(), pieces.data(), one.size() * sizeof(float)) == 0);
    }
  }
}

// The precision switch gives the bits of matmul_nn_bf16 for bf16 and of plain matmul_nn for f32.
TEST(matmul_nn_precision_switch_picks_the_bf16_or_the_f32_product) {
  s3::ThreadPool pool(2);
  const Operands op(11, 70, 90, 51);
  std::vector<float> bf16(size_t(op.M * op.N)), by_precision(bf16.size()), f32(bf16.size()), f32_by_precision(bf16.size());
  s3::cpu::matmul_nn_bf16(op.args(bf16.data(), false, false), pool);
  s3::cpu::matmul_nn(op.args(by_precision.data(), false, false), s3::MatmulPrecision::Bf16, pool);
  s3::cpu::matmul_nn(op.args(f32.data(), false, false), pool);
  s3::cpu::matmul_nn(op.args(f32_by_precision.data(), false, false), s3::MatmulPrecision::F32, pool);
  CHECK(std::memcmp(bf16.data(), by_precision.data(), bf16.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(f32.data(), f32_by_precision.data(), f32.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(f32.data(), bf16.data(), f32.size() * sizeof(float)) != 0);
}

}  // namespace
