// The CPU trainer (native/train): a tiny model overfits a fixed sequence with SFT; one policy-
// gradient step raises the log-prob of the sampled tokens under a positive advantage and lowers it
// under a negative one; packing sequences into one micro-batch gives the gradients of separate
// micro-batches; checkpoints with f32 or bf16 optimizer moments (saved as F32 or BF16) load with
// Qwen3Weights::load and resume bit-identically, and a checkpoint of the other moment dtype is
// refused; the KL penalty's loss matches the naive forward, kl_coef 0 changes no gradient bit, and
// a small gradient step on the penalty alone lowers it; accumulate returns the ratio quantiles of
// the weighted tokens (IcePop-masked ones included); BF16 products (matmul_precision) resume
// bit-identically, are recorded in trainer_state.json and stay within BF16 tolerance of f32.
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/safetensors.h"
#include "model/qwen3_train.h"
#include "model/qwen3_weights.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"
#include "train/trainer.h"

namespace {

using s3::DType;
using s3::train::LossKind;
using s3::train::TrainBatch;
using s3::train::Trainer;
using s3::train::TrainerOptions;

struct Fixture {
  s3test::TestModel model;
  s3::model::Qwen3Weights weights;
  explicit Fixture(uint64_t seed, bool tied = true)
      : model(make(seed, tied)),
        weights(s3::model::Qwen3Weights::from_tensors(model.config, model.named(),
                                                      s3::model::Qwen3Weights::Storage::Borrow)) {}
  static s3test::TestModel make(uint64_t seed, bool tied) {
    auto c = s3test::tiny_qwen3_config();
    c.tie_word_embeddings = tied;
    return s3test::make_test_model(c, DType::F32, seed, DType::F32);
  }
  Trainer trainer(const TrainerOptions& o) const { return Trainer(weights, s3test::qwen3_config_json(model.config), o); }
};

std::vector<int32_t> random_tokens(size_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(n);
  for (int32_t& x : t) x = int32_t(rng() % uint64_t(vocab));
  return t;
}

TrainBatch sft_batch(const std::vector<int32_t>& tokens) {
  TrainBatch b;
  b.tokens = tokens;
  b.coef.assign(tokens.size(), 1.0f);
  b.coef.back() = 0.0f;
  return b;
}

TrainerOptions options(double lr) {
  TrainerOptions o;
  o.adamw.lr = lr;
  o.threads = 2;
  return o;
}

// Checks that two trainers accumulated the same gradients up to summation order (and not all zero).
void check_same_gradients(const Trainer& a, const Trainer& b) {
  double gmax = 0.0, diff = 0.0;
  for (size_t i = 0; i < a.grads().size(); i++) {
    gmax = std::max(gmax, double(std::fabs(a.grads()[i])));
    diff = std::max(diff, double(std::fabs(a.grads()[i] - b.grads()[i])));
  }
  CHECK(gmax > 0.0);
  CHECK(diff <= 1e-4 * gmax);
}

}  // namespace

TEST(train_sft_overfits_a_fixed_sequence) {
  const Fixture f(21);
  Trainer trainer = f.trainer(options(3e-3));
  const TrainBatch b = sft_batch(random_tokens(24, f.model.config.vocab_size, 1));
  const double first = trainer.accumulate(b).loss;
  trainer.step();
  double last = first;
  for (int i = 0; i < 300 && last > first / 10.0; i++) {
    last = trainer.accumulate(b).loss;
    trainer.step();
  }
  CHECK(last < first / 10.0);
}

TEST(train_policy_gradient_moves_sampled_logprobs_with_the_advantage) {
  const Fixture f(22);
  for (float advantage : {1.0f, -1.0f}) {
    Trainer trainer = f.trainer(options(1e-3));
    TrainBatch b = sft_batch(random_tokens(16, f.model.config.vocab_size, 2));
    b.coef.assign(b.tokens.size(), 0.0f);
    const auto probe = trainer.accumulate(b);  // coef 0: nothing counted, no gradient
    CHECK_EQ(probe.tokens, int64_t(0));
    // The sampler's log-probs are the current ones (ratio 1).
    TrainBatch sft = sft_batch(b.tokens);
    const auto before = trainer.accumulate(sft);
    trainer.zero_grad();
    b.kind = LossKind::PolicyGradient;
    b.coef.assign(b.tokens.size(), advantage / 15.0f);
    b.coef.back() = 0.0f;
    b.old_logprobs.assign(b.tokens.size(), float(before.mean_logprob));
    const auto d = trainer.accumulate(b);
    CHECK_EQ(d.tokens, int64_t(15));
    trainer.step();
    const auto after = trainer.accumulate(sft);
    trainer.zero_grad();
    if (advantage > 0) {
      CHECK(after.mean_logprob > before.mean_logprob);
    } else {
      CHECK(after.mean_logprob < before.mean_logprob);
    }
  }
}

TEST(train_packed_batch_equals_separate_micro_batches) {
  const Fixture f(23, /*tied=*/false);
  Trainer packed = f.trainer(options(1e-3)), separate = f.trainer(options(1e-3));
  const auto a = random_tokens(9, f.model.config.vocab_size, 3), b = random_tokens(6, f.model.config.vocab_size, 4);
  TrainBatch both;
  both.tokens = a;
  both.tokens.insert(both.tokens.end(), b.begin(), b.end());
  both.seq_lengths = {9, 6};
  both.coef.assign(15, 0.5f);
  both.coef[8] = 0.0f;
  both.coef[14] = 0.0f;
  const auto dp = packed.accumulate(both);
  TrainBatch ba = sft_batch(a), bb = sft_batch(b);
  for (float& c : ba.coef) c *= 0.5f;
  for (float& c : bb.coef) c *= 0.5f;
  const double loss = separate.accumulate(ba).loss + separate.accumulate(bb).loss;
  CHECK_NEAR(dp.loss, loss, 1e-4 * std::fabs(loss));
  check_same_gradients(packed, separate);
  // coef on a sequence's last token has no target: refused.
  both.coef[8] = 1.0f;
  CHECK_THROWS(s3::train::TrainerError, packed.accumulate(both));
}

namespace {

// Three steps, a checkpoint, two more steps of `micro_batches` micro-batches each; a trainer
// resumed from the directory (with a pool of `resume_threads`) and one that loads it take the same
// two steps to the same bits. The checkpoint holds the moments in the state dtype, names that dtype
// in trainer_state.json, and is an ordinary Hugging Face directory for the inference path. The
// steps multiply at `precision`, which trainer_state.json records too.
void check_checkpoint_resumes_bit_identically(s3::train::OptimizerStateDtype state_dtype, uint64_t model_seed,
                                              uint64_t batch_seed, int micro_batches, size_t resume_threads,
                                              s3::MatmulPrecision precision = s3::MatmulPrecision::F32) {
  const Fixture f(model_seed);
  s3test::TempDir dir;
  const std::string ckpt = dir.file("ckpt");
  TrainerOptions o = options(1e-3);
  o.adamw.state_dtype = state_dtype;
  o.matmul_precision = precision;
  const auto b1 = sft_batch(random_tokens(12, f.model.config.vocab_size, batch_seed));
  const auto b2 = sft_batch(random_tokens(10, f.model.config.vocab_size, batch_seed + 1));
  auto two_more_steps = [&](Trainer& t) {
    for (int i = 0; i < 2; i++) {
      t.accumulate(i % 2 ? b2 : b1);
      for (int m = 1; m < micro_batches; m++) t.accumulate(b2);
      t.step();
    }
  };
  Trainer a = f.trainer(o);
  for (int i = 0; i < 3; i++) {
    a.accumulate(i % 2 ? b1 : b2);
    a.step();
  }
  a.save(ckpt);
  two_more_steps(a);
  const bool bf16 = state_dtype == s3::train::OptimizerStateDtype::Bf16;
  const s3::SafetensorsFile opt = s3::SafetensorsFile::open(ckpt + "/optimizer.safetensors");
  CHECK(opt.info("exp_avg_sq.model.norm.weight").dtype == (bf16 ? DType::BF16 : DType::F32));
  std::ifstream state_file(ckpt + "/trainer_state.json");
  std::stringstream state;
  state << state_file.rdbuf();
  CHECK(state.str().find(std::string("\"state_dtype\": \"") + (bf16 ? "bf16" : "f32") + "\"") != std::string::npos);
  CHECK(state.str().find(std::string("\"matmul_precision\": \"") + s3::matmul_precision_name(precision) + "\"") !=
        std::string::npos);
  TrainerOptions resume_options = o;
  resume_options.threads = resume_threads;
  Trainer b(ckpt, resume_options);  // resumes from the directory
  CHECK_EQ(b.step_count(), int64_t(3));
  Trainer c = f.trainer(o);
  c.load(ckpt);
  for (Trainer* t : {&b, &c}) {
    two_more_steps(*t);
    CHECK_EQ(t->step_count(), int64_t(5));
    CHECK(std::memcmp(t->params().data(), a.params().data(), a.params().size() * sizeof(float)) == 0);
  }
  const auto loaded = s3::model::Qwen3Weights::load(ckpt);
  CHECK_EQ(loaded.config().hidden_size, f.model.config.hidden_size);
  const auto layout = s3::model::Qwen3ParamLayout::make(loaded.config());
  const auto params = s3::model::qwen3_params_from_weights(loaded, layout);
  CHECK_EQ(params.size(), a.params().size());
}

}  // namespace

TEST(train_checkpoint_resume_is_bit_identical) {
  // f32 moments; two micro-batches per step after the checkpoint.
  check_checkpoint_resumes_bit_identically(s3::train::OptimizerStateDtype::F32, /*model_seed=*/24, /*batch_seed=*/5,
                                           /*micro_batches=*/2, /*resume_threads=*/2);
}

TEST(train_bf16_optimizer_state_saves_as_bf16_and_resumes_bit_identically) {
  // bf16 moments, resumed on another pool: the stochastic rounding does not depend on it.
  check_checkpoint_resumes_bit_identically(s3::train::OptimizerStateDtype::Bf16, /*model_seed=*/26, /*batch_seed=*/8,
                                           /*micro_batches=*/1, /*resume_threads=*/3);
}

// precision.train: bf16 (the paper's exploration setting): the steps' products take BF16 operands,
// and a checkpoint resumes to the same bits, on another thread count too.
TEST(train_bf16_products_resume_bit_identically_and_record_their_precision) {
  check_checkpoint_resumes_bit_identically(s3::train::OptimizerStateDtype::F32, /*model_seed=*/27, /*batch_seed=*/9,
                                           /*micro_batches=*/2, /*resume_threads=*/1, s3::MatmulPrecision::Bf16);
}

// The default trainer multiplies in f32 (options.matmul_precision F32, what the mini preset and
// `npx swarm train` run); asking for bf16 changes the gradients, within BF16 tolerance of f32's.
TEST(train_matmul_precision_defaults_to_f32_and_bf16_changes_the_gradients) {
  const Fixture f(28, /*tied=*/false);
  const auto batch = sft_batch(random_tokens(14, f.model.config.vocab_size, 10));
  CHECK(TrainerOptions{}.matmul_precision == s3::MatmulPrecision::F32);
  TrainerOptions bf16_options = options(1e-3);
  bf16_options.matmul_precision = s3::MatmulPrecision::Bf16;
  Trainer f32 = f.trainer(options(1e-3)), bf16 = f.trainer(bf16_options);
  const double f32_loss = f32.accumulate(batch).loss, bf16_loss = bf16.accumulate(batch).loss;
  CHECK(f32_loss != bf16_loss);
  CHECK_NEAR(bf16_loss, f32_loss, 1e-2 * std::fabs(f32_loss));
  double gmax = 0.0, diff = 0.0;
  for (size_t i = 0; i < f32.grads().size(); i++) {
    gmax = std::fmax(gmax, std::fabs(double(f32.grads()[i])));
    diff = std::fmax(diff, std::fabs(double(bf16.grads()[i]) - double(f32.grads()[i])));
  }
  CHECK(diff > 0.0);
  CHECK(diff <= 4e-2 * gmax);  // the tolerance of test_model_qwen3_train.cpp's bf16 comparison
}

TEST(train_checkpoint_of_the_other_optimizer_state_dtype_is_refused) {
  const Fixture f(27);
  s3test::TempDir dir;
  const TrainerOptions f32 = options(1e-3);
  TrainerOptions bf16 = f32;
  bf16.adamw.state_dtype = s3::train::OptimizerStateDtype::Bf16;
  const auto batch = sft_batch(random_tokens(9, f.model.config.vocab_size, 10));
  for (const auto& [saved, loading, expected] : {std::make_tuple(f32, bf16, "BF16"), std::make_tuple(bf16, f32, "F32")}) {
    const std::string ckpt = dir.file(std::string("ckpt-") + expected);
    Trainer saver = f.trainer(saved);
    saver.accumulate(batch);
    saver.step();
    saver.save(ckpt);
    Trainer loader = f.trainer(loading);
    const std::vector<float> before = loader.params();
    std::string message;
    try {
      loader.load(ckpt);
    } catch (const s3::train::TrainerError& e) {
      message = e.what();
    }
    CHECK(message.find(ckpt + "/optimizer.safetensors") != std::string::npos);
    CHECK(message.find("exp_avg.") != std::string::npos);
    CHECK(message.find(std::string("optimizer state in ") + expected) != std::string::npos);
    CHECK(loader.params() == before);  // untouched
    CHECK_EQ(loader.step_count(), int64_t(0));
    CHECK_THROWS(s3::train::TrainerError, Trainer(ckpt, loading));
  }
}

TEST(train_adamw_matches_hand_computed_updates_with_clipping_warmup_and_decay) {
  s3::ThreadPool pool(2);
  s3::train::AdamWOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  o.warmup_steps = 2;
  o.max_grad_norm = 1.0;
  std::vector<float> p = {1.0f, -2.0f, 0.5f};
  const std::vector<float> g = {3.0f, 4.0f, 0.0f};  // norm 5 → clipped to {0.6, 0.8, 0}
  s3::train::AdamWState state;
  std::vector<double> ref(p.begin(), p.end()), m(3, 0.0), v(3, 0.0);
  for (int step = 1; step <= 2; step++) {
    const auto r = s3::train::adamw_step(p.data(), g.data(), p.size(), state, o, pool);
    CHECK_NEAR(r.grad_norm, 5.0, 1e-6);
    CHECK_EQ(r.step, int64_t(step));
    const double lr = 0.1 * std::min(1.0, step / 2.0);
    CHECK_NEAR(r.lr, lr, 1e-12);
    for (size_t i = 0; i < 3; i++) {
      const double gi = double(g[i]) / 5.0;
      m[i] = 0.9 * m[i] + 0.1 * gi;
      v[i] = 0.999 * v[i] + 0.001 * gi * gi;
      const double mhat = m[i] / (1 - std::pow(0.9, step)), vhat = v[i] / (1 - std::pow(0.999, step));
      ref[i] -= lr * (mhat / (std::sqrt(vhat) + 1e-8) + 0.5 * ref[i]);
      CHECK_NEAR(p[i], ref[i], 1e-5);
    }
  }
}

namespace {

// A policy-gradient batch at ratio e^0.1 with the KL penalty towards ref = lp + r_t, where lp are
// the naive forward's log-probs; returns the expected loss and mean KL through the out-parameters.
TrainBatch kl_batch(const Fixture& f, const std::vector<int32_t>& tokens, float kl_coef, double* loss, double* kl_mean) {
  const auto logits = s3test::naive_qwen3_logits(f.model, tokens);
  TrainBatch b;
  b.kind = LossKind::PolicyGradient;
  b.tokens = tokens;
  b.kl_coef = kl_coef;
  const size_t T = tokens.size();
  *loss = 0.0;
  double kl_sum = 0.0;
  for (size_t t = 0; t < T; t++) {
    double lp = 0.0, coef = 0.0, weight = 0.0, r = 0.0;
    if (t + 1 < T) {
      double max = -INFINITY, total = 0.0;
      for (double z : logits[t]) max = std::max(max, z);
      for (double z : logits[t]) total += std::exp(z - max);
      lp = logits[t][size_t(tokens[t + 1])] - max - std::log(total);
      coef = (t % 3 == 0 ? 0.0 : t % 3 == 1 ? 0.5 : -0.25) / double(T - 1);  // some rows carry the penalty alone
      weight = 1.0 / double(T - 1);
      r = 0.2 * double(t % 5) - 0.4;
      *loss += -std::exp(0.1) * coef + double(kl_coef) * weight * (std::exp(r) - r - 1.0);
      kl_sum += std::exp(r) - r - 1.0;
    }
    b.coef.push_back(float(coef));
    b.old_logprobs.push_back(float(lp - 0.1));
    b.ref_logprobs.push_back(float(lp + r));
    b.kl_weight.push_back(float(weight));
  }
  *kl_mean = kl_sum / double(T - 1);
  return b;
}

}  // namespace

TEST(train_kl_penalty_loss_matches_the_naive_forward) {
  const Fixture f(25);
  Trainer trainer = f.trainer(options(1e-3));
  double loss = 0.0, kl_mean = 0.0;
  const TrainBatch b = kl_batch(f, random_tokens(13, f.model.config.vocab_size, 7), 0.2f, &loss, &kl_mean);
  const auto d = trainer.accumulate(b);
  CHECK_NEAR(d.loss, loss, 1e-4 * (1.0 + std::fabs(loss)));
  CHECK_NEAR(d.kl_mean, kl_mean, 1e-4 * (1.0 + kl_mean));
  CHECK_EQ(d.tokens, int64_t(8));  // coef ≠ 0 on 8 of the 12 predictions
}

TEST(train_kl_coef_zero_gives_exactly_the_old_gradients) {
  const Fixture f(26, /*tied=*/false);
  double loss = 0.0, kl_mean = 0.0;
  TrainBatch with = kl_batch(f, random_tokens(11, f.model.config.vocab_size, 8), 0.0f, &loss, &kl_mean);
  TrainBatch without = with;
  without.ref_logprobs.clear();
  without.kl_weight.clear();
  TrainBatch zero_weights = with;  // β > 0 but no token weighted: no row changes either
  zero_weights.kl_coef = 0.5f;
  zero_weights.kl_weight.assign(with.tokens.size(), 0.0f);
  Trainer a = f.trainer(options(1e-3));
  const auto da = a.accumulate(without);
  for (const TrainBatch* b : {&with, &zero_weights}) {
    Trainer t = f.trainer(options(1e-3));
    const auto d = t.accumulate(*b);
    CHECK_EQ(d.loss, da.loss);
    CHECK_EQ(d.kl_mean, 0.0);
    CHECK(std::memcmp(t.grads().data(), a.grads().data(), a.grads().size() * sizeof(float)) == 0);
  }
}

TEST(train_kl_penalty_alone_lowers_under_a_small_gradient_step_and_checks_its_inputs) {
  const Fixture f(27);
  Trainer trainer = f.trainer(options(1e-3));
  double loss = 0.0, kl_mean = 0.0;
  TrainBatch b = kl_batch(f, random_tokens(12, f.model.config.vocab_size, 9), 1.0f, &loss, &kl_mean);
  b.coef.assign(b.tokens.size(), 0.0f);
  // A small plain gradient step (largest change 1e-4) on the penalty alone lowers the mean KL.
  const double first = trainer.accumulate(b).kl_mean;
  float gmax = 0.0f;
  for (float g : trainer.grads()) gmax = std::max(gmax, std::fabs(g));
  CHECK(gmax > 0.0f);
  std::vector<float> moved = trainer.params();
  for (size_t i = 0; i < moved.size(); i++) moved[i] -= 1e-4f / gmax * trainer.grads()[i];
  trainer.set_params(moved);
  trainer.zero_grad();
  const double last = trainer.accumulate(b).kl_mean;
  CHECK(first > 0.0);
  CHECK(last < first);
  // Refused: on the SFT loss, a negative or non-finite β, misaligned inputs, a weight without a target.
  TrainBatch sft = b;
  sft.kind = LossKind::Sft;
  CHECK_THROWS(s3::train::TrainerError, trainer.accumulate(sft));
  for (float beta : {-0.1f, float(NAN)}) {
    TrainBatch bad = b;
    bad.kl_coef = beta;
    CHECK_THROWS(s3::train::TrainerError, trainer.accumulate(bad));
  }
  TrainBatch short_ref = b;
  short_ref.ref_logprobs.pop_back();
  CHECK_THROWS(s3::train::TrainerError, trainer.accumulate(short_ref));
  TrainBatch last_weighted = b;
  last_weighted.kl_weight.back() = 1.0f;
  CHECK_THROWS(s3::train::TrainerError, trainer.accumulate(last_weighted));
}

// accumulate returns the ratio quantiles of the weighted tokens (coef ≠ 0), IcePop-masked ones
// included: with old = lp − s_t (lp from the naive forward) the ratios are exp(s_t), and the
// quantiles equal the type-7 ones of those values; SFT gives all 1, no weighted token all 0.
TEST(train_ratio_quantiles_cover_the_weighted_tokens_with_the_masked_tail) {
  const Fixture f(28);
  Trainer trainer = f.trainer(options(1e-3));
  const std::vector<int32_t> tokens = random_tokens(41, f.model.config.vocab_size, 10);
  const auto logits = s3test::naive_qwen3_logits(f.model, tokens);
  TrainBatch b;
  b.kind = LossKind::PolicyGradient;
  b.tokens = tokens;
  std::vector<double> ratios;
  for (size_t t = 0; t < tokens.size(); t++) {
    double lp = 0.0, coef = 0.0;
    const double s = -2.5 + 0.125 * double(t);  // ratios from e^−2.5 (masked) to e^2.5 (masked)
    if (t + 1 < tokens.size()) {
      double max = -INFINITY, total = 0.0;
      for (double z : logits[t]) max = std::max(max, z);
      for (double z : logits[t]) total += std::exp(z - max);
      lp = logits[t][size_t(tokens[t + 1])] - max - std::log(total);
      coef = t % 4 == 3 ? 0.0 : 0.025;
    }
    if (coef != 0.0) ratios.push_back(std::exp(s));
    b.coef.push_back(float(coef));
    b.old_logprobs.push_back(float(lp - s));
  }
  const auto d = trainer.accumulate(b);
  CHECK_EQ(d.tokens, int64_t(ratios.size()));
  CHECK(d.fraction_masked > 0.0);
  const s3::train::RatioQuantiles want = s3::train::ratio_quantiles(ratios);
  const s3::train::RatioQuantiles& q = d.ratio_quantiles;
  const double tol = 1e-4;
  CHECK_NEAR(q.min, want.min, tol * want.min);
  CHECK_NEAR(q.p01, want.p01, tol * want.p01);
  CHECK_NEAR(q.p10, want.p10, tol * want.p10);
  CHECK_NEAR(q.p50, want.p50, tol * want.p50);
  CHECK_NEAR(q.p90, want.p90, tol * want.p90);
  CHECK_NEAR(q.p99, want.p99, tol * want.p99);
  CHECK_NEAR(q.max, want.max, tol * want.max);
  CHECK(q.min < double(trainer.options().icepop_low) && q.max > double(trainer.options().icepop_high));
  CHECK(q.min <= q.p01 && q.p01 <= q.p10 && q.p10 <= q.p50 && q.p50 <= q.p90 && q.p90 <= q.p99 && q.p99 <= q.max);
  // SFT: ρ ≡ 1; no weighted token: every field 0.
  trainer.zero_grad();
  const auto sft = trainer.accumulate(sft_batch(tokens));
  for (double v : {sft.ratio_quantiles.min, sft.ratio_quantiles.p01, sft.ratio_quantiles.p50, sft.ratio_quantiles.p99,
                   sft.ratio_quantiles.max}) {
    CHECK_EQ(v, 1.0);
  }
  b.coef.assign(b.coef.size(), 0.0f);
  const auto none = trainer.accumulate(b);
  CHECK_EQ(none.tokens, int64_t(0));
  for (double v : {none.ratio_quantiles.min, none.ratio_quantiles.p10, none.ratio_quantiles.p50, none.ratio_quantiles.p90,
                   none.ratio_quantiles.max}) {
    CHECK_EQ(v, 0.0);
  }
}

// Sequences that share a prompt prefix give, with the prefix computed once, the loss, diagnostics
// and gradients of computing every sequence whole (policy gradient with score-centering draws and
// the KL penalty, so every per-row input is remapped). A prefix stops before any weighted row: a
// sequence weighted from row 12 does not join a 20-token prefix, and nothing is shared without a
// second sharer.
TEST(train_shared_prefixes_give_the_gradients_of_whole_sequences) {
  const Fixture f(24, /*tied=*/false);
  const int64_t V = f.model.config.vocab_size, K = 2, P = 20;
  const auto common = random_tokens(size_t(P), V, 40);
  std::vector<std::vector<int32_t>> seqs;
  std::vector<int64_t> weighted_from;
  for (int i = 0; i < 4; i++) {
    std::vector<int32_t> s = common;
    const auto tail = random_tokens(size_t(5 + 3 * i), V, uint64_t(41 + i));
    s.insert(s.end(), tail.begin(), tail.end());
    seqs.push_back(s);
    weighted_from.push_back(i == 3 ? 12 : P);  // the fourth is weighted inside the common tokens
  }
  seqs.push_back(random_tokens(10, V, 45));
  weighted_from.push_back(3);
  TrainBatch b;
  b.kind = LossKind::PolicyGradient;
  b.num_draws = K;
  b.kl_coef = 0.1f;
  std::mt19937_64 rng(46);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (size_t i = 0; i < seqs.size(); i++) {
    const int64_t n = int64_t(seqs[i].size());
    b.seq_lengths.push_back(n);
    for (int64_t t = 0; t < n; t++) {
      b.tokens.push_back(seqs[i][size_t(t)]);
      const bool weighted = t >= weighted_from[i] && t + 1 < n;
      b.coef.push_back(weighted ? (i % 2 ? -0.05f : 0.07f) : 0.0f);
      b.old_logprobs.push_back(weighted ? -std::log(float(V)) + 0.3f * (unit(rng) - 0.5f) : 0.0f);
      b.ref_logprobs.push_back(weighted ? -std::log(float(V)) + 0.3f * (unit(rng) - 0.5f) : 0.0f);
      b.kl_weight.push_back(weighted ? 0.04f : 0.0f);
      for (int64_t k = 0; k < K; k++) {
        b.draw_tokens.push_back(weighted ? int32_t(rng() % uint64_t(V)) : -1);
        b.draw_logprobs.push_back(weighted ? -std::log(float(V)) : 0.0f);
      }
    }
  }
  TrainerOptions whole_options = options(1e-3), shared_options = options(1e-3);
  whole_options.shared_prefix_min_tokens = 0;
  shared_options.shared_prefix_min_tokens = 4;
  Trainer whole = f.trainer(whole_options), shared = f.trainer(shared_options);
  const auto dw = whole.accumulate(b);
  const auto ds = shared.accumulate(b);
  CHECK_EQ(dw.shared_prefix_tokens, int64_t(0));
  CHECK_EQ(ds.shared_prefix_tokens, int64_t(2 * P));  // sequences 0–2 share 20 tokens; 3 and 4 stay whole
  CHECK_EQ(ds.tokens, dw.tokens);
  CHECK_NEAR(ds.loss, dw.loss, 1e-5 * std::fabs(dw.loss) + 1e-7);
  CHECK_NEAR(ds.mean_ratio, dw.mean_ratio, 1e-5);
  CHECK_NEAR(ds.mean_entropy, dw.mean_entropy, 1e-5);
  CHECK_NEAR(ds.mean_logprob, dw.mean_logprob, 1e-5);
  CHECK_NEAR(ds.centering, dw.centering, 1e-5 * std::fabs(dw.centering) + 1e-7);
  CHECK_NEAR(ds.kl_mean, dw.kl_mean, 1e-6);
  CHECK(dw.kl_mean > 0.0);
  check_same_gradients(whole, shared);
  // The same batch again gives the same bits (the sharing is deterministic).
  Trainer again = f.trainer(shared_options);
  again.accumulate(b);
  CHECK(std::memcmp(again.grads().data(), shared.grads().data(), shared.grads().size() * sizeof(float)) == 0);
}
