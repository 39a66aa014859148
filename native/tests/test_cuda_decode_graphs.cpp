// test_cuda_decode_graphs.cpp: decode steps replayed from CUDA graphs (model/qwen3_decode_graphs.h)
// against the same runner launching every kernel itself: two CUDA runners of one small model, graphs
// on and off, prefill the same sequences, then run the same decode steps of varying sizes (new row
// counts captured, earlier ones replayed with other sequences in them, padding rows beside real
// ones), a weight swap in between; every draw (token and log-prob, 1 + 8 per row) must be equal bit
// for bit where the GEMMs are batch-invariant (the runner's gemm text says when not; then log-probs
// within 1e-3), with bf16 and FP8 weights over bf16 and FP8 caches, for each attention kernel (the
// tiled ones replay a plan padded to a fixed size). The graphed runner must say how many graphs it
// captured and replayed. Skipped where CUDA is not usable; never run on a GPU yet (the CPU
// emulation, scripts/cuda-emulation, runs it: capture records, replay runs the recorded work).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "engine/model_runner.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

#ifdef S3_WITH_CUDA

namespace {

using s3::engine::CudaGraphs;
using s3::engine::RunnerOptions;

constexpr int64_t kSequences = 6, kBlocksPerSequence = 20, kDraws = 9;

std::shared_ptr<const s3::model::Qwen3Weights> small_weights(uint64_t seed) {
  static std::vector<std::unique_ptr<s3test::TestModel>> models;  // the weights borrow their bytes
  models.push_back(std::make_unique<s3test::TestModel>(s3test::make_test_model(s3test::small_qwen3_config(), s3::DType::BF16, seed)));
  return std::make_shared<const s3::model::Qwen3Weights>(s3::model::Qwen3Weights::from_tensors(
      models.back()->config, models.back()->named(), s3::model::Qwen3Weights::Storage::Borrow, "test model"));
}

RunnerOptions options_for(s3::engine::WeightFormat format, s3::KvDtype dtype, CudaGraphs graphs, s3::engine::CudaAttention attention) {
  RunnerOptions o;
  o.device = s3::model::Device::Cuda;
  o.num_blocks = kSequences * kBlocksPerSequence;
  o.kv_dtype = dtype;
  o.max_batch_tokens = 64;
  o.max_sequences = 8;
  o.max_context = kBlocksPerSequence * 16;
  o.weight_format = format;
  o.cuda_graphs = graphs;
  o.cuda_attention = attention;
  return o;
}

// One step of `members` (sequence indices), each adding `lengths[i]` tokens after `starts[s]`, every
// sequence sampling its last token; draws: [members × kDraws].
std::vector<s3::cpu::TokenDraw> step(s3::engine::ModelRunner& runner, const std::vector<int64_t>& members,
                                     const std::vector<int64_t>& lengths, const std::vector<int64_t>& starts,
                                     const std::vector<std::vector<int32_t>>& tables, int64_t salt) {
  std::vector<int32_t> tokens;
  std::vector<s3::cpu::AttentionSequence> sequences;
  std::vector<int64_t> rows;
  std::vector<s3::engine::RunnerSample> samples;
  for (size_t i = 0; i < members.size(); i++) {
    const int64_t s = members[i];
    for (int64_t t = 0; t < lengths[i]; t++) tokens.push_back(int32_t((s * 131 + (starts[size_t(s)] + t) * 17 + salt) % 4096));
    sequences.push_back({starts[size_t(s)], lengths[i], tables[size_t(s)].data(), kBlocksPerSequence});
    rows.push_back(int64_t(tokens.size()) - 1);
    samples.push_back({1.0f, uint64_t(s + 7), uint64_t(starts[size_t(s)] + lengths[i]), kDraws});
  }
  std::vector<s3::cpu::TokenDraw> draws(members.size() * kDraws);
  runner.run_batch({{tokens.data(), sequences.data(), int64_t(sequences.size()), rows.data(), int64_t(rows.size())}, samples.data(), kDraws},
                   draws.data());
  return draws;
}

}  // namespace

TEST(cuda_decode_graphs_replay_the_eager_steps_bit_for_bit) {
  s3test::require_cuda();
  s3::ThreadPool pool(2);
  const auto first = small_weights(5), second = small_weights(6);
  std::vector<std::vector<int32_t>> tables(kSequences);
  for (int64_t s = 0; s < kSequences; s++) {
    for (int64_t b = 0; b < kBlocksPerSequence; b++) tables[size_t(s)].push_back(int32_t(s * kBlocksPerSequence + b));
  }
  using s3::engine::CudaAttention;
  for (const CudaAttention attention : {CudaAttention::Split, CudaAttention::Tiled, CudaAttention::TiledMma}) {
    for (const s3::engine::WeightFormat format : {s3::engine::WeightFormat::Stored, s3::engine::WeightFormat::Fp8}) {
      for (const s3::KvDtype dtype : {s3::KvDtype::Bf16, s3::KvDtype::Fp8E4M3}) {
        const auto eager = s3::engine::make_model_runner(options_for(format, dtype, CudaGraphs::Off, attention), first, pool);
        const auto graphed = s3::engine::make_model_runner(options_for(format, dtype, CudaGraphs::On, attention), first, pool);
        const std::string what = eager->describe().attention + ", " + (format == s3::engine::WeightFormat::Fp8 ? "fp8" : "bf16") +
                                 " weights, " + (dtype == s3::KvDtype::Bf16 ? "bf16" : "fp8") + " cache";
        CHECK_EQ(graphed->describe().attention, eager->describe().attention);
        CHECK_EQ(eager->describe().graphs, std::string("off"));
        const bool invariant = eager->describe().gemm.find("not batch-invariant") == std::string::npos;
        std::vector<int64_t> starts(kSequences, 0);
        int64_t mismatched = 0;
        double worst = 0.0;
        const auto both = [&](const std::vector<int64_t>& members, const std::vector<int64_t>& lengths, int64_t salt) {
          const std::vector<s3::cpu::TokenDraw> a = step(*eager, members, lengths, starts, tables, salt);
          const std::vector<s3::cpu::TokenDraw> b = step(*graphed, members, lengths, starts, tables, salt);
          for (size_t i = 0; i < a.size(); i++) {
            mismatched += a[i].token != b[i].token || std::memcmp(&a[i].logprob, &b[i].logprob, 4) != 0;
            worst = s3test::max_or_nan(worst, std::fabs(double(a[i].logprob) - double(b[i].logprob)));
          }
          for (size_t i = 0; i < members.size(); i++) starts[size_t(members[i])] += lengths[i];
        };
        // Prompts (eager in both: not decode steps), except sequence 4's single token, which is a
        // decode step of 1 row: captured there. Sequence 2 decodes past 256 positions, in two
        // attention splits where the others need one, so the steps' plans differ. Then decode steps: 6 → 8 rows captured, 3 → 4
        // captured, 6 → 8 replayed, 1 replayed, a weight swap, 3 → 4 replayed over other sequences,
        // 1 replayed, 5 → 8 replayed.
        const int64_t prompts[kSequences] = {37, 5, 270, 16, 1, 50};
        for (int64_t s = 0; s < kSequences; s++) {
          for (int64_t done = 0; done < prompts[s]; done += 64) both({s}, {std::min<int64_t>(64, prompts[s] - done)}, 0);
        }
        both({0, 1, 2, 3, 4, 5}, {1, 1, 1, 1, 1, 1}, 1);
        both({1, 3, 4}, {1, 1, 1}, 2);
        both({0, 1, 2, 3, 4, 5}, {1, 1, 1, 1, 1, 1}, 3);
        both({2}, {1}, 4);
        eager->set_weights(second);
        graphed->set_weights(second);
        both({0, 2, 5}, {1, 1, 1}, 5);
        both({5}, {1}, 6);
        both({0, 1, 2, 3, 4}, {1, 1, 1, 1, 1}, 7);
        const std::string graphs = graphed->describe().graphs;
        std::printf("  %s: %s; %lld draws differ, largest |Δ log-prob| %.3g%s\n", what.c_str(), graphs.c_str(), (long long)mismatched, worst,
                    invariant ? "" : " (GEMMs not batch-invariant)");
        if (invariant) {
          CHECK_EQ(mismatched, int64_t(0));
        } else {
          CHECK(worst <= 1e-3);
        }
        // Row counts 1, 8 and 4 captured. A weight swap in place keeps the graphs (their addresses
        // hold the new weights): steps 3 to 7 replay; one that moves the weights drops them, and steps
        // 5, 6 and 7 capture again: only steps 3 and 4 replayed.
        const bool kept = graphs.find("(3 captured, 5 replays)") != std::string::npos;
        const bool recaptured = graphs.find("(3 captured, 2 replays)") != std::string::npos;
        CHECK(kept || recaptured);
      }
    }
  }
}

#else

TEST(cuda_decode_graphs) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
