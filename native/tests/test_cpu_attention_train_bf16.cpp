// The training attention with BF16 products (cpu/attention_train_products.h: precision.train bf16)
// for every BF16 path this machine can run: f32 sums of the rounded operands (every CPU), the
// avx512bf16 level's VDPBF16PS kernels, the amx kernel over its software tile model (both on any
// AVX512-BF16 CPU) and on the tiles themselves (AMX CPUs). Against the f32 rowwise reference run on q, k, v and dout rounded to
// BF16, so what is left is the rounding of the probabilities and score gradients to BF16 and the
// order of f32 sums; over packed sequences of several lengths, blocks that do and do not divide
// them, and a shared prefix. And determinism: the same bits whatever the thread count.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention_backward.h"
#include "cpu/matmul_nn_bf16.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::normal_values;

using s3::cpu::MatmulNnBf16Kernels;
using s3::cpu::PackedAttentionShape;


std::vector<float> rounded(const std::vector<float>& x) {
  std::vector<float> r(x.size());
  for (size_t i = 0; i < x.size(); i++) r[i] = s3::bf16_to_f32(s3::f32_to_bf16(x[i]));
  return r;
}

struct Kernels {
  std::string name;
  const MatmulNnBf16Kernels* kernels;  // null: f32 sums of the rounded operands (levels without BF16 kernels)
};

std::vector<Kernels> bf16_kernel_sets() {
  std::vector<Kernels> sets = {{"rounded operands, f32 products", nullptr}};
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Avx512Bf16) {
    sets.push_back({"avx512bf16", &s3::cpu::kMatmulNnAvx512Bf16});
    sets.push_back({"amx tile model", &s3::cpu::kMatmulNnAmxModel});
  }
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Amx) sets.push_back({"amx", &s3::cpu::kMatmulNnAmx});
  return sets;
}

struct Result {
  std::vector<float> out, lse, dq, dk, dv;
};

// kernels: the BF16 products through those kernels; reference: the f32 rowwise reference.
Result run(const PackedAttentionShape& shape, const std::vector<float>& q, const std::vector<float>& k,
           const std::vector<float>& v, const std::vector<float>& dout, s3::ThreadPool& pool,
           const MatmulNnBf16Kernels* kernels, bool reference = false) {
  Result r;
  r.out.resize(q.size());
  r.lse.resize(size_t(shape.T * shape.NH));
  r.dq.resize(q.size());
  r.dk.resize(k.size());
  r.dv.resize(v.size());
  const s3::cpu::AttentionTrainPrecision bf16{s3::MatmulPrecision::Bf16, kernels};
  if (reference) {
    s3::cpu::causal_attention_train_forward_rowwise(r.out.data(), r.lse.data(), q.data(), k.data(), v.data(), shape, pool);
    s3::cpu::causal_attention_backward_rowwise(r.dq.data(), r.dk.data(), r.dv.data(), dout.data(), r.out.data(),
                                               r.lse.data(), q.data(), k.data(), v.data(), shape, pool);
  } else {
    s3::cpu::causal_attention_train_forward(r.out.data(), r.lse.data(), q.data(), k.data(), v.data(), shape, pool, bf16);
    s3::cpu::causal_attention_backward(r.dq.data(), r.dk.data(), r.dv.data(), dout.data(), r.out.data(), r.lse.data(),
                                       q.data(), k.data(), v.data(), shape, pool, bf16);
  }
  return r;
}

// Largest |a − b| over the largest |b|.
double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); i++) {
    if (!std::isfinite(a[i])) return INFINITY;
    gap = std::max(gap, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return gap / scale;
}

}  // namespace

TEST(attention_train_bf16_products_match_the_reference_on_rounded_operands) {
  const auto sets = bf16_kernel_sets();
  s3::ThreadPool pool(2);
  const int64_t NH = 4, NKV = 2, HD = 40;  // HD off the 32-value step of the tiles
  // Lengths 150, 1, 64, 85; and the same with sequence 1 continuing sequence 0's 150-token prefix.
  const std::vector<int64_t> begins = {0, 150, 151, 215, 300};
  const std::vector<int64_t> parents = {-1, 0, -1, -1};
  const int64_t T = begins.back();
  const std::vector<float> q = normal_values(size_t(T * NH * HD), 31), k = normal_values(size_t(T * NKV * HD), 32);
  const std::vector<float> v = normal_values(size_t(T * NKV * HD), 33), dout = normal_values(size_t(T * NH * HD), 34);
  const std::vector<float> qr = rounded(q), kr = rounded(k), vr = rounded(v), doutr = rounded(dout);
  for (const int64_t* parent : {static_cast<const int64_t*>(nullptr), parents.data()}) {
    for (int64_t block : {64, 7, 1000}) {
      const PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 4, block, parent};
      const Result ref = run(shape, qr, kr, vr, doutr, pool, nullptr, true);
      for (const Kernels& set : sets) {
        const Result got = run(shape, q, k, v, dout, pool, set.kernels);
        // The scores are exact products of the rounded operands summed in f32, so the log-sum-exp
        // agrees to f32 sums; the outputs and gradients differ by the BF16 rounding of P and dS
        // (relative 2^-9 per term): a few 1e-3 of their scale.
        const double out = relative_gap(got.out, ref.out), lse = relative_gap(got.lse, ref.lse);
        const double dq = relative_gap(got.dq, ref.dq), dk = relative_gap(got.dk, ref.dk), dv = relative_gap(got.dv, ref.dv);
        std::printf("  %s, block %lld%s: out %.2e lse %.2e dq %.2e dk %.2e dv %.2e\n", set.name.c_str(), (long long)block,
                    parent != nullptr ? ", shared prefix" : "", out, lse, dq, dk, dv);
        CHECK(lse < 1e-5);
        CHECK(out < 1e-2);
        CHECK(dq < 1e-2);
        CHECK(dk < 1e-2);
        CHECK(dv < 1e-2);
      }
    }
  }
}

TEST(attention_train_bf16_products_do_not_depend_on_the_thread_count) {
  const auto sets = bf16_kernel_sets();
  const int64_t NH = 4, NKV = 2, HD = 64;
  const std::vector<int64_t> begins = {0, 97, 160, 161, 300};
  const int64_t T = begins.back();
  const std::vector<float> q = normal_values(size_t(T * NH * HD), 41), k = normal_values(size_t(T * NKV * HD), 42);
  const std::vector<float> v = normal_values(size_t(T * NKV * HD), 43), dout = normal_values(size_t(T * NH * HD), 44);
  const PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 4, 64};
  s3::ThreadPool one(1), three(3);
  for (const Kernels& set : sets) {
    const Result a = run(shape, q, k, v, dout, one, set.kernels), b = run(shape, q, k, v, dout, three, set.kernels);
    CHECK(std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(a.dq.data(), b.dq.data(), a.dq.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(a.dk.data(), b.dk.data(), a.dk.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(a.dv.data(), b.dv.data(), a.dv.size() * sizeof(float)) == 0);
  }
}

// Sequences longer than the 512 queries the tile kernels' dK and dV products wait for, at blocks
// that divide 512 and that do not (an odd row then waits across the flush), with and without a
// shared prefix: every BF16 kernel set agrees with the f32 products of the same rounded operands
// to f32 sums (the operands, P and dS rounded alike), so no step of queries is lost or doubled.
TEST(attention_train_bf16_products_over_long_sequences_agree_with_the_rounded_f32_products) {
  const auto sets = bf16_kernel_sets();
  s3::ThreadPool pool(2);
  const int64_t NH = 2, NKV = 1, HD = 40;
  const std::vector<int64_t> begins = {0, 150, 1350, 1400};  // lengths 150, 1,200, 50
  const std::vector<int64_t> parents = {-1, 0, -1};
  const int64_t T = begins.back();
  const std::vector<float> q = normal_values(size_t(T * NH * HD), 51), k = normal_values(size_t(T * NKV * HD), 52);
  const std::vector<float> v = normal_values(size_t(T * NKV * HD), 53), dout = normal_values(size_t(T * NH * HD), 54);
  for (const int64_t* parent : {static_cast<const int64_t*>(nullptr), parents.data()}) {
    for (int64_t block : {64, 7}) {
      const PackedAttentionShape shape{T, NH, NKV, HD, begins.data(), 3, block, parent};
      const Result want = run(shape, q, k, v, dout, pool, nullptr);
      for (const Kernels& set : sets) {
        if (set.kernels == nullptr) continue;
        const Result got = run(shape, q, k, v, dout, pool, set.kernels);
        const double dq = relative_gap(got.dq, want.dq), dk = relative_gap(got.dk, want.dk), dv = relative_gap(got.dv, want.dv);
        std::printf("  %s, block %lld%s: dq %.2e dk %.2e dv %.2e\n", set.name.c_str(), (long long)block,
                    parent != nullptr ? ", shared prefix" : "", dq, dk, dv);
        CHECK(dq < 1e-4);
        CHECK(dk < 1e-4);
        CHECK(dv < 1e-4);
      }
    }
  }
}
