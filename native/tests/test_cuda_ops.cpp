// test_cuda_ops.cpp: every per-element and per-row CUDA op against its CPU twin on random inputs,
// with the threshold each comparison uses stated (f32 ops NMSE ≤ 1e-7; exact where the two sides
// share core/ops arithmetic on identical inputs): RMSNorm (rows and per-head), RoPE, SwiGLU and the
// residual add, the embedding and the row gather, the KV store in f32/bf16/fp8 (the CPU cache's
// bytes and scales), FP8 quantization of GEMM inputs (core/ops/fp8_block_scales.h's layout), FP8
// block quantization of weights and its widening (model/fp8_quantize.h's bits), and the sampler and token log-probs (the CPU's tokens). Skipped where CUDA cannot run.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/ops/fp8_block_scales.h"
#include "core/ops/fp8_rows.h"
#include "cpu/embedding.h"
#include "cpu/rmsnorm.h"
#include "cpu/rope.h"
#include "cpu/sampling.h"
#include "cpu/swiglu.h"
#include "model/fp8_quantize.h"
#include "model/kv_cache.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

#ifdef S3_WITH_CUDA
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/embedding.h"
#include "cuda/fp8_activations.h"
#include "cuda/fp8_weights.h"
#include "cuda/kv_cache.h"
#include "cuda/rmsnorm.h"
#include "cuda/rope.h"
#include "cuda/sampling.h"
#include "cuda/swiglu.h"

using s3test::DeviceArray;

namespace {

}  // namespace

TEST(cuda_rmsnorm_matches_cpu_for_rows_and_heads) {
  s3test::require_gpu();
  for (auto [N, C] : {std::pair<int64_t, int64_t>{37, 1024}, {200 * 16, 128}, {5, 16}, {3, 300}}) {
    const std::vector<float> x = s3test::random_floats(size_t(N * C), 1, 3.0f), w = s3test::random_floats(size_t(C), 2);
    std::vector<float> want(x.size());
    s3::cpu::rmsnorm_forward(want.data(), x.data(), w.data(), N, C, 1e-6f);
    DeviceArray<float> dx(x), dw(w), dout(x.size());
    s3::cuda::rmsnorm_forward(dout.get(), dx.get(), dw.get(), N, C, 1e-6f, nullptr);
    const std::vector<float> got = dout.download();
    CHECK_NMSE("rmsnorm N=" + std::to_string(N) + " C=" + std::to_string(C), got.data(), want.data(), got.size(), 1e-7);
    std::printf("  rmsnorm: %zu of %zu values differ in any bit\n", s3test::exact_mismatches(got, want), got.size());
    s3::cuda::rmsnorm_forward(dx.get(), dx.get(), dw.get(), N, C, 1e-6f, nullptr);  // in place
    CHECK(dx.download() == got);
  }
}

TEST(cuda_rope_is_bit_identical_to_cpu) {
  s3test::require_gpu();
  const int64_t T = 70, NH = 16, HD = 128, P = 5000;
  std::vector<int64_t> all(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; p++) all[size_t(p)] = p;
  std::vector<float> cos(size_t(P * HD / 2)), sin(cos.size());
  s3::cpu::rope_tables(cos.data(), sin.data(), all.data(), P, HD, 1e6f);
  std::vector<int32_t> positions(static_cast<size_t>(T));
  std::vector<int64_t> positions64(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; t++) positions64[size_t(t)] = positions[size_t(t)] = int32_t((t * 71 + 3) % P);
  std::vector<float> x = s3test::random_floats(size_t(T * NH * HD), 3), want = x;
  std::vector<float> tcos(size_t(T * HD / 2)), tsin(tcos.size());
  s3::cpu::rope_tables(tcos.data(), tsin.data(), positions64.data(), T, HD, 1e6f);
  s3::cpu::rope_forward(want.data(), tcos.data(), tsin.data(), T, NH, HD);
  DeviceArray<float> dx(x), dcos(cos), dsin(sin);
  DeviceArray<int32_t> dpos(positions);
  s3::cuda::rope_forward(dx.get(), dpos.get(), dcos.get(), dsin.get(), T, NH, HD, nullptr);
  CHECK_EQ(s3test::exact_mismatches(dx.download(), want), size_t(0));
}

TEST(cuda_swiglu_and_residual_match_cpu) {
  s3test::require_gpu();
  const int64_t N = 3 * 3072 + 5;
  const std::vector<float> g = s3test::random_floats(size_t(N), 4, 4.0f), u = s3test::random_floats(size_t(N), 5);
  std::vector<float> want(static_cast<size_t>(N));
  s3::cpu::swiglu_forward(want.data(), g.data(), u.data(), N);
  DeviceArray<float> dg(g), du(u), dout(static_cast<size_t>(N));
  s3::cuda::swiglu_forward(dout.get(), dg.get(), du.get(), N, nullptr);
  const std::vector<float> got = dout.download();
  CHECK_NMSE("swiglu", got.data(), want.data(), got.size(), 1e-7);
  std::vector<float> x = g;
  s3::cpu::residual_forward(x.data(), u.data(), N);
  s3::cuda::residual_forward(dg.get(), du.get(), N, nullptr);
  CHECK_EQ(s3test::exact_mismatches(dg.download(), x), size_t(0));
}

TEST(cuda_embedding_and_gather_are_exact) {
  s3test::require_gpu();
  const s3test::TestModel model = s3test::make_test_model(s3test::small_qwen3_config(), s3::DType::BF16, 3);
  const s3::model::Qwen3Weights weights =
      s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow);
  const s3::cpu::MatrixView& table = weights.embed_tokens();
  const std::vector<int32_t> tokens = {0, 4095, 17, 17, 2048, 3};
  const int64_t T = int64_t(tokens.size()), C = table.cols;
  std::vector<float> want(size_t(T * C));
  s3::cpu::embedding_forward(want.data(), tokens.data(), T, table);
  std::vector<uint16_t> bits(size_t(table.rows * C));
  std::memcpy(bits.data(), table.data, bits.size() * 2);
  DeviceArray<uint16_t> dtable(bits);
  DeviceArray<int32_t> dtokens(tokens);
  DeviceArray<float> dx(size_t(T * C));
  s3::cuda::embedding_forward(dx.get(), dtokens.get(), dtable.get(), s3::DType::BF16, T, C, nullptr);
  CHECK(dx.download() == want);
  DeviceArray<int32_t> drows(std::vector<int32_t>{5, 0, 2});
  DeviceArray<float> dg(size_t(3 * C));
  s3::cuda::gather_rows(dg.get(), dx.get(), drows.get(), 3, C, nullptr);
  const std::vector<float> gathered = dg.download();
  for (int64_t c = 0; c < C; c++) CHECK_EQ(gathered[size_t(c)], want[size_t(5 * C + c)]);
}

TEST(cuda_kv_store_writes_the_cpu_caches_bytes_and_scales_and_skips_padding_rows) {
  s3test::require_gpu();
  s3::model::Qwen3Config c = s3test::small_qwen3_config();
  c.num_hidden_layers = 1;
  const int64_t NKV = c.num_key_value_heads, HD = c.head_dim, bs = 16, blocks = 6;
  const int32_t table_a[] = {4, 1}, table_b[] = {0, 5, 2};
  const s3::cpu::AttentionSequence seqs[] = {{3, 20, table_a, 2}, {30, 9, table_b, 3}};
  const int64_t T = 29;
  std::vector<float> k = s3test::random_floats(size_t(T * NKV * HD), 6, 2.0f), v = s3test::random_floats(k.size(), 7);
  for (int64_t d = 0; d < HD; d++) k[size_t(2 * NKV * HD + d)] = 0.0f;  // one all-zero row
  std::vector<int64_t> rows;
  for (const auto& s : seqs) {
    for (int64_t i = 0; i < s.length; i++) {
      const int64_t p = s.start + i;
      rows.push_back(int64_t(s.block_table[p / bs]) * NKV * bs + p % bs);
    }
  }
  for (s3::KvDtype dtype : {s3::KvDtype::F32, s3::KvDtype::Bf16, s3::KvDtype::Fp8E4M3}) {
    s3::model::KvCache cpu(c, bs, blocks, dtype);
    cpu.store(0, seqs, 2, k.data(), v.data());
    s3::cuda::DeviceAllocator allocator("test");
    s3::cuda::DeviceKvCache gpu(allocator, 1, NKV, HD, bs, blocks, dtype, nullptr);
    // Three padding tokens (row −1, as a replayed decode step's) after the real ones: nothing of
    // theirs may reach the cache, so its bytes must still equal the CPU's.
    std::vector<float> padded_k = k, padded_v = v;
    const std::vector<float> noise = s3test::random_floats(size_t(3 * NKV * HD), 8, 3.0f);
    padded_k.insert(padded_k.end(), noise.begin(), noise.end());
    padded_v.insert(padded_v.end(), noise.begin(), noise.end());
    std::vector<int64_t> padded_rows = rows;
    padded_rows.insert(padded_rows.end(), 3, -1);
    DeviceArray<float> dk(padded_k), dv(padded_v);
    DeviceArray<int64_t> drows(padded_rows);
    s3::cuda::kv_store(gpu.pages(0), dk.get(), dv.get(), drows.get(), T + 3, nullptr);
    const s3::cpu::KvPages want = cpu.pages(0);
    const size_t bytes = size_t(blocks * NKV * bs * HD * s3::kv_dtype_size(dtype));
    std::vector<uint8_t> keys(bytes), values(bytes);
    s3test::cuda_ok(cudaMemcpy(keys.data(), gpu.pages(0).keys, bytes, cudaMemcpyDeviceToHost), "download");
    s3test::cuda_ok(cudaMemcpy(values.data(), gpu.pages(0).values, bytes, cudaMemcpyDeviceToHost), "download");
    CHECK_EQ(std::memcmp(keys.data(), want.keys, bytes), 0);
    CHECK_EQ(std::memcmp(values.data(), want.values, bytes), 0);
    if (dtype == s3::KvDtype::Fp8E4M3) {
      // Compare the scales of the rows written (unwritten rows: 0 on the device, 1 on the CPU).
      std::vector<float> scales(size_t(blocks * NKV * bs));
      s3test::cuda_ok(cudaMemcpy(scales.data(), gpu.pages(0).key_scales, scales.size() * 4, cudaMemcpyDeviceToHost), "download");
      for (int64_t row : rows) {
        for (int64_t h = 0; h < NKV; h++) CHECK_EQ(scales[size_t(row + h * bs)], want.key_scales[row + h * bs]);
      }
    }
  }
}

TEST(cuda_fp8_activation_quantization_matches_the_shared_row_math) {
  s3test::require_gpu();
  for (auto [T, K] : {std::pair<int64_t, int64_t>{5, 256}, {1, 1024}, {8, 3072}, {3, 160}}) {
    std::vector<float> x = s3test::random_floats(size_t(T * K), 8, 5.0f);
    const int64_t rows = s3::ops::fp8_activation_rows(T), groups = s3::ops::fp8_blocks(K);
    DeviceArray<float> dx(x);
    DeviceArray<uint8_t> dbytes(size_t(rows * K));
    DeviceArray<float> dscales(size_t(rows * groups));
    s3::cuda::quantize_fp8_activations(dbytes.get(), dscales.get(), dx.get(), T, K, nullptr);
    const std::vector<uint8_t> bytes = dbytes.download();
    const std::vector<float> scales = dscales.download();
    for (int64_t t = 0; t < rows; t++) {
      for (int64_t kb = 0; kb < groups; kb++) {
        const int64_t begin = kb * 128, end = std::min(K, begin + 128);
        float max_abs = 0.0f;
        for (int64_t k = begin; k < end && t < T; k++) max_abs = std::max(max_abs, std::fabs(x[size_t(t * K + k)]));
        const float scale = s3::ops::fp8_row_scale(max_abs, true);
        CHECK_EQ(scales[size_t(s3::ops::activation_scale_index(t, kb, rows))], scale);
        for (int64_t k = begin; k < end; k++) {
          const uint8_t want = t < T ? s3::ops::fp8_row_encode(x[size_t(t * K + k)], scale, true) : uint8_t(0);
          CHECK_EQ(bytes[size_t(t * K + k)], want);
        }
      }
    }
  }
}

// `--weights fp8` made on the device: the same bytes and scales as the host's quantization (in the
// checkpoint's scale layout and cuBLASLt's padded one, past-the-end scales 1), and widened to the
// bf16 bits the host upload makes, on partial blocks, an all-zero block, magnitudes 1e-6 .. 1e4, a
// NaN and an inf.
TEST(cuda_fp8_weight_quantization_and_widening_match_the_host) {
  s3test::require_gpu();
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{300, 200}, {128, 640}, {70, 1030}}) {
    std::vector<float> w = s3test::random_floats(size_t(rows * cols), 9);
    for (size_t i = 0; i < w.size(); i++) w[i] *= std::pow(10.0f, float(i * 7919 % 11) - 6.0f);
    for (int64_t r = 0; r < std::min<int64_t>(rows, 128); r++) {
      for (int64_t c = 0; c < std::min<int64_t>(cols, 128); c++) w[size_t(r * cols + c)] = 0.0f;
    }
    if (rows > 130) w[size_t(130 * cols + 129)] = NAN, w[size_t(131 * cols + 5)] = INFINITY;
    const int64_t row_blocks = s3::ops::fp8_blocks(rows), col_blocks = s3::ops::fp8_blocks(cols);
    std::vector<uint8_t> want_bytes(w.size());
    std::vector<float> want_scales(size_t(row_blocks * col_blocks));
    s3::model::quantize_fp8_blockwise(w.data(), rows, cols, want_bytes.data(), want_scales.data());
    for (const int64_t stride : {col_blocks, s3::ops::weight_scale_stride(cols)}) {
      DeviceArray<float> dw(w);
      DeviceArray<uint8_t> dbytes(w.size());
      DeviceArray<float> dscales(size_t(row_blocks * stride));
      DeviceArray<uint16_t> dwidened(w.size());
      s3::cuda::quantize_fp8_blockwise(dw.get(), rows, cols, dbytes.get(), dscales.get(), stride, nullptr);
      s3::cuda::widen_fp8_blockwise_to_bf16(dbytes.get(), dscales.get(), stride, rows, cols, dwidened.get(), nullptr);
      const std::vector<float> scales = dscales.download();
      const std::vector<uint16_t> widened = dwidened.download();
      CHECK(dbytes.download() == want_bytes);
      size_t scale_mismatches = 0, widened_mismatches = 0;
      for (int64_t rb = 0; rb < row_blocks; rb++) {
        for (int64_t kb = 0; kb < stride; kb++) {
          const float want = kb < col_blocks ? want_scales[size_t(rb * col_blocks + kb)] : 1.0f;
          scale_mismatches += std::memcmp(&want, &scales[size_t(rb * stride + kb)], 4) != 0;
        }
      }
      for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
          const size_t i = size_t(r * cols + c);
          const float scale = want_scales[size_t((r / 128) * col_blocks + c / 128)];
          widened_mismatches += widened[i] != s3::f32_to_bf16(s3::fp8e4m3_to_f32(want_bytes[i]) * scale);
        }
      }
      CHECK_EQ(scale_mismatches, size_t(0));
      CHECK_EQ(widened_mismatches, size_t(0));
    }
  }
}

TEST(cuda_sampler_draws_the_cpu_tokens_and_logprobs) {
  s3test::require_gpu();
  for (int64_t V : {int64_t(4096), int64_t(151936)}) {
    const int64_t R = 12, width = 33;
    std::vector<float> logits = s3test::random_floats(size_t(R * V), 9, V > 10000 ? 4.0f : 2.0f);
    logits[5] = -INFINITY;
    std::vector<s3::cuda::SampleRow> rows;
    for (int64_t r = 0; r < R; r++) {
      const float temperature = r % 4 == 0 ? 0.0f : r % 4 == 1 ? 0.7f : r % 4 == 2 ? 1.0f : 1.6f;
      rows.push_back({temperature, uint64_t(1000 + r), uint64_t(r * 977), int32_t(1 + (r * 5) % width)});
    }
    DeviceArray<float> dlogits(logits);
    DeviceArray<s3::cuda::SampleRow> drows(rows);
    DeviceArray<int32_t> dtokens(size_t(R * width)), dstatus(static_cast<size_t>(R));
    DeviceArray<float> dlogprobs(size_t(R * width));
    s3::cuda::sample_rows(dlogits.get(), R, V, drows.get(), width, dtokens.get(), dlogprobs.get(), dstatus.get(), nullptr);
    const std::vector<int32_t> tokens = dtokens.download(), status = dstatus.download();
    const std::vector<float> logprobs = dlogprobs.download();
    double worst = 0.0;
    for (int64_t r = 0; r < R; r++) {
      CHECK_EQ(status[size_t(r)], int32_t(0));
      std::vector<s3::cpu::TokenDraw> want(size_t(rows[size_t(r)].num_draws));
      s3::cpu::sample_forward(want.data(), int64_t(want.size()), &logits[size_t(r * V)], V, rows[size_t(r)].temperature,
                              rows[size_t(r)].seed, rows[size_t(r)].token_index);
      for (size_t i = 0; i < want.size(); i++) {
        CHECK_EQ(tokens[size_t(r * width) + i], want[i].token);
        worst = s3test::max_or_nan(worst, double(std::fabs(logprobs[size_t(r * width) + i] - want[i].logprob)));
      }
    }
    std::printf("  sampler V=%lld: largest log-prob difference %.3g\n", (long long)V, worst);
    CHECK(worst <= 1e-5);
    // Token log-probs (score).
    std::vector<int32_t> targets;
    for (int64_t r = 0; r < R; r++) targets.push_back(int32_t((r * 7919) % V));
    DeviceArray<int32_t> dtargets(targets);
    DeviceArray<float> dscores(static_cast<size_t>(R));
    s3::cuda::token_logprobs(dlogits.get(), R, V, dtargets.get(), dscores.get(), dstatus.get(), nullptr);
    const std::vector<float> scores = dscores.download();
    for (int64_t r = 0; r < R; r++) CHECK_NEAR(scores[size_t(r)], s3::cpu::token_logprob(&logits[size_t(r * V)], V, targets[size_t(r)]), 1e-5);
    // A NaN logit is refused as the CPU refuses it.
    logits[size_t(3 * V + 7)] = NAN;
    dlogits.upload(logits);
    s3::cuda::sample_rows(dlogits.get(), R, V, drows.get(), width, dtokens.get(), dlogprobs.get(), dstatus.get(), nullptr);
    CHECK_EQ(dstatus.download()[3], int32_t(s3::cuda::kSampleBadLogit));
  }
}

#else

TEST(cuda_ops) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
