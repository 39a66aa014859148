// BF16 and FP8 weights in panels (native/cpu/weight_panels, the avx512bf16 level's panel kernels):
// the packing holds every pair of k of every row and zeros past them; a matmul on panels is, element
// by element, the chain of VDPBF16PS over the pairs of k in increasing order (FP8: per 128-wide
// block of k, each block's sum times its scale fused into a running sum), at every tail of M, N and
// K; a row's bits do not depend on the batch, the threads or a fused pass; the model packs its BF16
// and FP8 linear weights and LM head for the CPU forward (not the embedding it reads rows of, not the
// views other readers take) exactly where this CPU reads panels; the trainer's BF16 linear layers
// give the panel kernel's bits.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/aligned_allocator.h"
#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/matmul.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/weight_panels.h"
#include "model/qwen3_weights.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"
#include "tests/naive_qwen3.h"

namespace {

using s3::DType;
using s3::cpu::MatrixView;

struct PanelWeight {
  std::vector<uint16_t> values;
  s3::CacheLineVector<uint32_t> panels;
  MatrixView view;
  PanelWeight(int64_t N, int64_t K, uint64_t seed) : values(size_t(N * K)) {
    const std::vector<float> w = s3::tests::normal_values(size_t(N * K), seed, 0.0f, 0.1f);
    for (size_t i = 0; i < values.size(); i++) values[i] = s3::f32_to_bf16(w[i]);
    panels.assign(size_t(s3::cpu::weight_panel_places(N, K)), 0xDEADBEEFu);  // every dword must be written
    view = {values.data(), DType::BF16, N, K, nullptr};
    s3::ThreadPool pool(3);
    s3::cpu::pack_weight_panels(view, panels.data(), pool);
    view.bf16_panels = panels.data();
  }
};

// FP8 e4m3 codes of N(0, 1) values, with a block scale per 128 × 128 block drawn from (2⁻⁸, 2⁻⁴)
// (a different one per block, so reading another block's scale shows).
struct PanelFp8Weight {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  s3::CacheLineVector<uint16_t> panels;
  MatrixView view;
  PanelFp8Weight(int64_t N, int64_t K, uint64_t seed) : codes(size_t(N * K)) {
    const std::vector<float> w = s3::tests::normal_values(size_t(N * K), seed);
    for (size_t i = 0; i < codes.size(); i++) codes[i] = s3::f32_to_fp8e4m3(w[i]);
    const int64_t blocks = ((N + 127) / 128) * ((K + 127) / 128);
    for (float z : s3::tests::normal_values(size_t(blocks), seed + 1)) scales.push_back(std::exp2(-6.0f + 2.0f * std::tanh(z)));
    panels.assign(size_t(s3::cpu::weight_panel_places(N, K)), 0xBEEF);  // every place must be written
    view = {codes.data(), DType::F8_E4M3, N, K, scales.data()};
    CHECK_EQ(s3::cpu::weight_panel_bytes(view), int64_t(panels.size() * sizeof(uint16_t)));
    s3::ThreadPool pool(3);
    s3::cpu::pack_weight_panels(view, panels.data(), pool);
    s3::cpu::attach_weight_panels(view, panels.data());
    CHECK(view.fp8_panels == panels.data() && view.bf16_panels == nullptr);
  }
};

const s3::cpu::MatmulKernels& bf16_kernels() { return *s3::cpu::matmul_kernels_for(s3::SimdLevel::Avx512Bf16); }

// N (tails of 16 and of a 64-column panel), K (odd, under one step of 32, several steps), M.
const int64_t kShapes[][2] = {{1, 1}, {16, 2}, {70, 45}, {200, 130}, {64, 64}, {130, 96}, {150, 300}};
const int64_t kRows[] = {1, 2, 5, 6, 7, 13, 40};

// The packing levels this CPU runs: the scalar loop, and AVX-512 where the avx512bf16 level runs.
std::vector<s3::SimdLevel> packing_levels() {
  std::vector<s3::SimdLevel> levels = {s3::SimdLevel::Scalar};
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Avx512Bf16) levels.push_back(s3::SimdLevel::Avx512Bf16);
  return levels;
}

// For each M of kRows, out = x · wᵀ on the avx512bf16 kernels (2 threads) for a random x, every
// element equal to expected(x, m, n), x as M rows of w.cols values.
template <typename Expected>
void check_every_output(const MatrixView& w, const Expected& expected) {
  s3::ThreadPool pool(2);
  for (int64_t M : kRows) {
    const std::vector<float> x = s3::tests::normal_values(size_t(M * w.cols), uint64_t(M * 7 + w.cols), 0.0f, 2.0f);
    std::vector<float> out(size_t(M * w.rows));
    s3::cpu::matmul_forward(out.data(), x.data(), w, M, pool, bf16_kernels());
    for (int64_t m = 0; m < M; m++) {
      for (int64_t n = 0; n < w.rows; n++) CHECK_EQ(out[size_t(m * w.rows + n)], expected(x, m, n));
    }
  }
}

// a (with panels) and b, each alone on one thread and fused into one pass on three, give the same
// bits; so do a's rows alone and three at a time (decode-sized) against the M-row batch.
void check_rows_do_not_depend_on_batch_threads_or_a_fused_pass(const MatrixView& a, const MatrixView& b, int64_t M) {
  const int64_t K = a.cols;
  s3::ThreadPool one(1), three(3);
  const std::vector<float> x = s3::tests::normal_values(size_t(M * K), 3);
  std::vector<float> alone_a(size_t(M * a.rows)), alone_b(size_t(M * b.rows));
  s3::cpu::matmul_forward(alone_a.data(), x.data(), a, M, one, bf16_kernels());
  s3::cpu::matmul_forward(alone_b.data(), x.data(), b, M, one, bf16_kernels());
  std::vector<float> fused_a(alone_a.size()), fused_b(alone_b.size());
  const s3::cpu::MatmulOutput outputs[] = {{fused_b.data(), &b}, {fused_a.data(), &a}};
  s3::cpu::matmul_forward(outputs, 2, x.data(), M, three, bf16_kernels());
  CHECK(fused_a == alone_a);
  CHECK(fused_b == alone_b);
  for (int64_t m = 0; m < M; m += 7) {
    for (int64_t rows : {int64_t(1), int64_t(3)}) {
      if (m + rows > M) continue;
      std::vector<float> part(size_t(rows * a.rows));
      s3::cpu::matmul_forward(part.data(), x.data() + m * K, a, rows, three, bf16_kernels());
      CHECK(std::equal(part.begin(), part.end(), alone_a.begin() + m * a.rows));
    }
  }
}

}  // namespace

// Every place of 64-column panels over pairs of k: column n's pair q holds weight (n, 2q) in its low
// `bits` and (n, 2q + 1) above them, zero past N and K.
template <typename Place, typename Weight>
void check_panel_places(const std::vector<Place>& panels, int64_t N, int64_t K, int bits, const Weight& weight) {
  const int64_t pairs = (K + 31) / 32 * 16;
  for (int64_t c = 0; c < (N + 63) / 64; c++) {
    for (int64_t q = 0; q < pairs; q++) {
      for (int64_t j = 0; j < 64; j++) {
        const int64_t n = c * 64 + j, k = 2 * q;
        const uint32_t even = n < N && k < K ? weight(n, k) : 0;
        const uint32_t odd = n < N && k + 1 < K ? weight(n, k + 1) : 0;
        CHECK_EQ(uint32_t(panels[size_t((c * pairs + q) * 64 + j)]), even | (odd << bits));
      }
    }
  }
}

TEST(weight_panels_hold_every_pair_of_k_and_zeros_past_the_weights) {
  if (packing_levels().size() == 1) std::printf("    (this CPU lacks AVX512-BF16: the scalar packing only)\n");
  s3::ThreadPool pool(3);
  for (const auto& shape : kShapes) {
    const int64_t N = shape[0], K = shape[1];
    const PanelWeight w(N, K, uint64_t(N * 1000 + K));
    const int64_t pairs = (K + 31) / 32 * 16;
    CHECK_EQ(int64_t(w.panels.size()), (N + 63) / 64 * pairs * 64);
    for (s3::SimdLevel level : packing_levels()) {
      std::vector<uint32_t> panels(w.panels.size(), 0xDEADBEEFu);  // every dword must be written
      s3::cpu::pack_weight_panels(w.view, panels.data(), pool, level);
      check_panel_places(panels, N, K, 16, [&](int64_t n, int64_t k) { return uint32_t(w.values[size_t(n * K + k)]); });
    }
  }
}

TEST(matmul_on_weight_panels_is_the_pairwise_chain_of_vdpbf16ps) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernel cannot run here");
  }
  for (const auto& shape : kShapes) {
    const int64_t N = shape[0], K = shape[1];
    const PanelWeight w(N, K, uint64_t(N + K));
    check_every_output(w.view, [&](const std::vector<float>& x, int64_t m, int64_t n) {
      const auto product = [&](int64_t k) {
        return k < K ? s3::bf16_to_f32(s3::f32_to_bf16(x[size_t(m * K + k)])) * s3::bf16_to_f32(w.values[size_t(n * K + k)])
                     : 0.0f;
      };
      float acc = 0.0f;  // VDPBF16PS: the odd product, then the even one, each rounded to f32
      for (int64_t k = 0; k < K; k += 2) acc = (acc + product(k + 1)) + product(k);
      return acc;
    });
  }
}

TEST(matmul_on_weight_panels_rows_do_not_depend_on_batch_threads_or_a_fused_pass) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernel cannot run here");
  }
  const PanelWeight a(200, 130, 1), b(70, 130, 2);
  check_rows_do_not_depend_on_batch_threads_or_a_fused_pass(a.view, b.view, 40);
}

TEST(fp8_weight_panels_hold_every_pair_of_codes_and_zeros_past_the_weights) {
  s3::ThreadPool pool(3);
  for (const auto& shape : kShapes) {
    const int64_t N = shape[0], K = shape[1];
    const PanelFp8Weight w(N, K, uint64_t(N * 1000 + K));
    const int64_t pairs = (K + 31) / 32 * 16;
    CHECK_EQ(int64_t(w.panels.size()), (N + 63) / 64 * pairs * 64);
    for (s3::SimdLevel level : packing_levels()) {
      std::vector<uint16_t> panels(w.panels.size(), 0xBEEF);  // every place must be written
      s3::cpu::pack_weight_panels(w.view, panels.data(), pool, level);
      check_panel_places(panels, N, K, 8, [&](int64_t n, int64_t k) { return uint32_t(w.codes[size_t(n * K + k)]); });
    }
  }
}

TEST(weight_panels_refuse_what_they_cannot_pack) {
  s3::ThreadPool pool(1);
  std::vector<uint32_t> panels(64 * 16);
  std::vector<uint8_t> codes(64 * 32);
  const MatrixView unscaled{codes.data(), DType::F8_E4M3, 64, 32, nullptr};
  CHECK_THROWS(std::invalid_argument, s3::cpu::pack_weight_panels(unscaled, panels.data(), pool));
  std::vector<float> values(64 * 32);
  MatrixView f32{values.data(), DType::F32, 64, 32, nullptr};
  CHECK_EQ(s3::cpu::weight_panel_bytes(f32), int64_t(0));
  CHECK_THROWS(std::invalid_argument, s3::cpu::pack_weight_panels(f32, panels.data(), pool));
  CHECK_THROWS(std::invalid_argument, s3::cpu::attach_weight_panels(f32, panels.data()));
}

TEST(matmul_on_fp8_weight_panels_is_a_chain_per_scale_block_fused_into_a_running_sum) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernel cannot run here");
  }
  for (const auto& shape : kShapes) {
    const int64_t N = shape[0], K = shape[1];
    const PanelFp8Weight w(N, K, uint64_t(N + K));
    const int64_t scale_cols = (K + 127) / 128;
    check_every_output(w.view, [&](const std::vector<float>& x, int64_t m, int64_t n) {
      // The weights widen exactly to fp8 / 256; each block's pairs are one VDPBF16PS chain (the odd
      // product, then the even one), and the block's sum times scale × 256 is fused into the
      // running sum, the first block's onto zero.
      const auto product = [&](int64_t k) {
        return k < K ? s3::bf16_to_f32(s3::f32_to_bf16(x[size_t(m * K + k)])) *
                           (s3::fp8e4m3_to_f32(w.codes[size_t(n * K + k)]) / 256.0f)
                     : 0.0f;
      };
      float running = 0.0f;
      for (int64_t block = 0; block * 128 < K; block++) {
        float acc = 0.0f;
        for (int64_t k = block * 128; k < std::min(K, block * 128 + 128); k += 2) acc = (acc + product(k + 1)) + product(k);
        running = std::fma(acc, w.scales[size_t((n / 128) * scale_cols + block)] * 256.0f, running);
      }
      return running;
    });
  }
}

// Every e4m3 code (the NaN codes 0x7F and 0xFF left out) through both widenings, in registers (4
// rows) and into scratch (256 rows): one-hot inputs pick single weights, whose products and sums
// are then exact, so each output must be the code's value times its block scale.
TEST(fp8_weight_panels_widen_every_code_exactly) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernel cannot run here");
  }
  s3::ThreadPool pool(2);
  const int64_t N = 64, K = 256;
  PanelFp8Weight w(N, K, 9);
  for (int64_t n = 0; n < N; n++) {
    for (int64_t k = 0; k < K; k++) {
      const uint8_t code = uint8_t((k + 3 * n) % 256);
      w.codes[size_t(n * K + k)] = (code & 0x7F) == 0x7F ? uint8_t(code - 1) : code;
    }
  }
  w.scales = {0.015625f, 0.25f};  // 2⁻⁶ and 2⁻² for the two blocks of k
  w.view.block_scales = w.scales.data();
  s3::cpu::pack_weight_panels(w.view, w.panels.data(), pool);
  for (int64_t M : {int64_t(4), int64_t(256)}) {
    for (int64_t first = 0; first < K; first += M) {
      std::vector<float> x(size_t(M * K), 0.0f), out(size_t(M * N));
      for (int64_t m = 0; m < M; m++) x[size_t(m * K + first + m)] = 1.0f;
      s3::cpu::matmul_forward(out.data(), x.data(), w.view, M, pool, bf16_kernels());
      for (int64_t m = 0; m < M; m++) {
        const int64_t k = first + m;
        for (int64_t n = 0; n < N; n++) {
          const float expected = s3::fp8e4m3_to_f32(w.codes[size_t(n * K + k)]) * w.scales[size_t(k / 128)];
          CHECK_EQ(out[size_t(m * N + n)], expected);
        }
      }
    }
  }
}

// Beside an FP8 weight with panels, one without (BF16 rows) makes the fused pass hand out chunks of
// columns that do not start on a panel, which the FP8 kernel then takes a panel's part at a time.
TEST(matmul_on_fp8_weight_panels_rows_do_not_depend_on_batch_threads_or_a_fused_pass) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernel cannot run here");
  }
  const PanelFp8Weight a(200, 300, 1);
  PanelWeight b(70, 300, 2);
  b.view.bf16_panels = nullptr;
  check_rows_do_not_depend_on_batch_threads_or_a_fused_pass(a.view, b.view, 40);
}

// The trainer's BF16 linear layer at avx512bf16 (matmul_nn_bf16 on Wᵀ packed from the f32 rows,
// cpu/packed_weights.h) sums each output in the same chain as the inference forward on the
// rounded weights' panels: the same bits, so a policy's trainer and sampler agree on its linear
// layers wherever their BF16 inputs agree.
TEST(trainer_bf16_linear_gives_the_bits_of_the_forward_on_weight_panels) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) {
    SKIP("this CPU lacks AVX512-BF16: the panel kernels cannot run here");
  }
  s3::ThreadPool pool(2);
  for (const auto& shape : kShapes) {
    const int64_t N = shape[0], K = shape[1];
    const std::vector<float> w = s3::tests::normal_values(size_t(N * K), uint64_t(N * 31 + K), 0.0f, 0.1f);
    std::vector<uint16_t> rounded(w.size());
    for (size_t i = 0; i < w.size(); i++) rounded[i] = s3::f32_to_bf16(w[i]);
    s3::CacheLineVector<uint32_t> panels(size_t(s3::cpu::weight_panel_places(N, K)));
    MatrixView view{rounded.data(), DType::BF16, N, K, nullptr};
    s3::cpu::pack_weight_panels(view, panels.data(), pool);
    view.bf16_panels = panels.data();
    s3::cpu::MatmulNnBf16PackedB wt;
    s3::cpu::matmul_nn_bf16_pack_b_transposed(wt, w.data(), K, K, N, s3::cpu::kMatmulNnAvx512Bf16, pool);
    for (int64_t M : kRows) {
      const std::vector<float> x = s3::tests::normal_values(size_t(M * K), uint64_t(M * 11 + K), 0.0f, 2.0f);
      std::vector<float> inference(size_t(M * N)), trainer(size_t(M * N));
      s3::cpu::matmul_forward(inference.data(), x.data(), view, M, pool, bf16_kernels());
      s3::cpu::matmul_nn_bf16(s3::cpu::matmul_nn_args(trainer.data(), x.data(), nullptr, M, N, K, false), wt, pool);
      CHECK(std::memcmp(inference.data(), trainer.data(), inference.size() * sizeof(float)) == 0);
    }
  }
}

TEST(model_weights_carry_panels_exactly_where_this_cpu_reads_them) {
  s3::ThreadPool pool(2);
  const auto panels_of = [](const MatrixView& view) -> const void* {
    return view.dtype == DType::F8_E4M3 ? static_cast<const void*>(view.fp8_panels) : view.bf16_panels;
  };
  for (DType dtype : {DType::BF16, DType::F8_E4M3}) {
    const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), dtype, 5);
    for (const char* setting : {"1", "0"}) {
      setenv("S3_WEIGHT_PANELS", setting, 1);
      const bool used = s3::cpu::weight_panels_used();
      CHECK_EQ(used, setting[0] == '1' && s3::cpu::matmul_kernels().reads_weight_panels);
      const s3::model::Qwen3Weights weights = s3::model::Qwen3Weights::from_tensors(
          model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow, "test model");
      for (size_t l = 0; l < weights.layers().size(); l++) {
        const auto& stored = weights.layers()[l];
        const auto& cpu = weights.cpu_layers(pool)[l];
        const MatrixView* as_stored[] = {&stored.q_proj, &stored.k_proj, &stored.v_proj, &stored.o_proj,
                                         &stored.gate_proj, &stored.up_proj, &stored.down_proj};
        const MatrixView* for_cpu[] = {&cpu.q_proj, &cpu.k_proj, &cpu.v_proj, &cpu.o_proj,
                                       &cpu.gate_proj, &cpu.up_proj, &cpu.down_proj};
        for (int i = 0; i < 7; i++) {
          CHECK(as_stored[i]->dtype == dtype);
          // The views others read (device upload, export) stay as stored.
          CHECK(as_stored[i]->bf16_panels == nullptr && as_stored[i]->fp8_panels == nullptr);
          CHECK_EQ(panels_of(*for_cpu[i]) != nullptr, used);
          CHECK(for_cpu[i]->data == as_stored[i]->data && for_cpu[i]->block_scales == as_stored[i]->block_scales);
        }
      }
      const MatrixView& head = weights.cpu_lm_head(pool);
      CHECK_EQ(panels_of(head) != nullptr, used && s3::cpu::weight_panel_bytes(head) > 0);
      CHECK(weights.lm_head().bf16_panels == nullptr && weights.lm_head().fp8_panels == nullptr);
      CHECK(weights.embed_tokens().bf16_panels == nullptr && weights.embed_tokens().fp8_panels == nullptr);
    }
  }
  unsetenv("S3_WEIGHT_PANELS");
}
