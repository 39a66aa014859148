// test_cuda_loss.cpp: the fused LM-head loss on the device (train/losses_cuda.h) against the CPU's
// (train/losses.h, itself checked by finite differences in test_train_trainer.cpp) on the same
// inputs: SFT, policy gradient with IcePop, with score centering over 32 draws (some missing) at
// temperature 0.7, and with the KL penalty; rows without a target, with coef 0 and with a KL weight
// alone; chunks smaller than the rows. f32 head: every count equal (tokens, masked, kl_tokens, the
// ratios' number), the sums within 1e-6 relative, each ratio within 1e-5, dh and dhead NMSE ≤ 1e-9
// (f32 GEMMs in another order); run twice, the same bits. bf16 head (h and ∂L/∂logits rounded to
// bf16 for the GEMMs) against the f32 CPU loss: dh and dhead NMSE ≤ 1e-4, the loss within 1e-2
// relative. Skipped where CUDA is not usable.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "tests/cuda_test_support.h"
#include "train/losses.h"

#ifdef S3_WITH_CUDA
#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "train/losses_cuda.h"

using s3test::DeviceArray;

namespace {

struct LossCase {
  std::vector<int32_t> targets, draws;
  std::vector<float> coef, old_lp, ref_lp, kl_weight, draw_lp;
};

LossCase make_case(int64_t T, int64_t V, int64_t K) {
  LossCase c;
  std::mt19937 rng(7);
  c.targets.resize(size_t(T));
  c.coef.resize(size_t(T));
  c.old_lp.resize(size_t(T));
  c.ref_lp.resize(size_t(T));
  c.kl_weight.resize(size_t(T));
  c.draws.resize(size_t(T * K));
  c.draw_lp.resize(size_t(T * K));
  for (int64_t t = 0; t < T; t++) {
    c.targets[size_t(t)] = t % 17 == 0 ? -1 : int32_t(rng() % uint32_t(V));
    c.coef[size_t(t)] = t % 5 == 0 ? 0.0f : float(int(rng() % 7) - 3) * 0.1f;
    c.old_lp[size_t(t)] = -float(rng() % 120) / 10.0f;
    c.ref_lp[size_t(t)] = -float(rng() % 120) / 10.0f;
    c.kl_weight[size_t(t)] = t % 3 == 0 ? 0.0f : 0.01f;
    for (int64_t k = 0; k < K; k++) {
      c.draws[size_t(t * K + k)] = k % 9 == 0 ? -1 : int32_t(rng() % uint32_t(V));
      c.draw_lp[size_t(t * K + k)] = -float(rng() % 120) / 10.0f;
    }
  }
  return c;
}

bool near_relative(double got, double want, double tolerance) {
  return std::fabs(got - want) <= tolerance * std::max(1.0, std::fabs(want));
}

}  // namespace

TEST(cuda_fused_head_loss_matches_cpu) {
  s3test::require_cuda();
  s3::cuda::DeviceAllocator allocator("test");
  s3::cuda::Stream stream;
  s3::ThreadPool pool(2);
  for (bool bf16 : {false, true}) {
    const int64_t T = 300, C = 64, V = bf16 ? 4096 : 3001, K = 32;
    const std::vector<float> h = s3test::random_floats(size_t(T * C), 1), head = s3test::random_floats(size_t(V * C), 2, 0.3f);
    const std::vector<float> dhead0 = s3test::random_floats(size_t(V * C), 3, 0.01f);
    const LossCase c = make_case(T, V, K);
    s3::train::DeviceHeadLoss loss(s3::cuda::cublaslt().library, allocator, stream.get(), 64);
    DeviceArray<float> d_h(h), d_dh(size_t(T * C)), d_dhead(dhead0);
    DeviceArray<float> d_head32(head);
    std::vector<uint16_t> head_bits(head.size());
    for (size_t i = 0; i < head.size(); i++) head_bits[i] = s3::f32_to_bf16(head[i]);
    DeviceArray<uint16_t> d_head16(head_bits);
    const s3::cuda::DeviceMatrix device_head{bf16 ? static_cast<const void*>(d_head16.get()) : d_head32.get(),
                                             bf16 ? s3::cuda::GemmDtype::Bf16 : s3::cuda::GemmDtype::F32, V, C, nullptr};
    for (int mode = 0; mode < 4; mode++) {
      const std::string name = std::string(bf16 ? "bf16 " : "f32 ") + (mode == 0 ? "sft" : mode == 1 ? "pg" : mode == 2 ? "pg+centering" : "pg+centering+kl");
      s3::train::LossInputs in;
      in.targets = c.targets.data();
      in.coef = c.coef.data();
      in.old_logprobs = c.old_lp.data();
      s3::train::LossOptions o;
      o.chunk_rows = 64;
      if (mode >= 1) o.kind = s3::train::LossKind::PolicyGradient;
      if (mode >= 2) {
        in.num_draws = K;
        in.draw_tokens = c.draws.data();
        in.draw_logprobs = c.draw_lp.data();
        o.temperature = 0.7;
      }
      if (mode >= 3) {
        o.kl_coef = 0.05f;
        in.ref_logprobs = c.ref_lp.data();
        in.kl_weight = c.kl_weight.data();
      }
      std::vector<float> want_dh(size_t(T * C)), want_dhead = dhead0;
      const s3::train::LossStats want =
          s3::train::fused_head_loss(want_dh.data(), want_dhead.data(), h.data(), head.data(), T, C, V, in, o, pool);
      std::vector<std::vector<float>> first;
      for (int run = 0; run < 2; run++) {
        d_dhead.upload(dhead0);
        const s3::train::LossStats got = loss.run(d_dh.get(), d_dhead.get(), d_h.get(), device_head, T, in, o);
        const std::vector<float> dh = d_dh.download(), dhead = d_dhead.download();
        if (run == 1) {
          CHECK(std::memcmp(dh.data(), first[0].data(), dh.size() * 4) == 0);
          CHECK(std::memcmp(dhead.data(), first[1].data(), dhead.size() * 4) == 0);
          continue;
        }
        first = {dh, dhead};
        std::printf("  %s: loss %.9g (cpu %.9g), %lld tokens, %lld masked\n", name.c_str(), got.loss, want.loss,
                    (long long)got.tokens, (long long)got.masked);
        if (bf16) {
          CHECK(near_relative(got.loss, want.loss, 1e-2));
          CHECK_NMSE("fused loss dh " + name, dh.data(), want_dh.data(), dh.size(), 1e-4);
          CHECK_NMSE("fused loss dhead " + name, dhead.data(), want_dhead.data(), dhead.size(), 1e-4);
          continue;
        }
        CHECK_EQ(got.tokens, want.tokens);
        CHECK_EQ(got.masked, want.masked);
        CHECK_EQ(got.kl_tokens, want.kl_tokens);
        CHECK_EQ(got.ratios.size(), want.ratios.size());
        for (size_t i = 0; i < got.ratios.size() && i < want.ratios.size(); i++) CHECK(near_relative(got.ratios[i], want.ratios[i], 1e-5));
        CHECK(near_relative(got.loss, want.loss, 1e-6));
        CHECK(near_relative(got.entropy_sum, want.entropy_sum, 1e-6));
        CHECK(near_relative(got.logprob_sum, want.logprob_sum, 1e-6));
        CHECK(near_relative(got.centering, want.centering, 1e-6));
        CHECK(near_relative(got.draw_weight_sum, want.draw_weight_sum, 1e-6));
        CHECK(near_relative(got.kl_sum, want.kl_sum, 1e-6));
        CHECK_NMSE("fused loss dh " + name, dh.data(), want_dh.data(), dh.size(), 1e-9);
        CHECK_NMSE("fused loss dhead " + name, dhead.data(), want_dhead.data(), dhead.size(), 1e-9);
      }
    }
  }
}

#else

TEST(cuda_loss) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
