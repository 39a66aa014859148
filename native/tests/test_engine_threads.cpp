// test_engine_threads.cpp: the engine's scheduler thread with callers on several threads: pieces
// equal to each sequence generated alone, whatever the batch limits and a cache small enough to
// force preemption (with the stored and with FP8 weights); prefix caching and weight swaps change no
// token; cancellation, release and close answer every request exactly once. Each runs on the CPU
// and, where CUDA is usable, again with the CUDA runner (cuda_* cases: the same invariants there).
#include <condition_variable>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

using namespace s3::engine;
using s3::model::Device;

namespace {

// Collects results from the scheduler thread (and the turns they came in, in order).
struct Inbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<uint64_t, EngineResult> results;
  std::deque<EngineTurn> turns;  // kept only when keep_turns
  bool keep_turns = false;
  int64_t deliveries = 0;

  Engine::ResultCallback callback() {
    return [this](EngineTurn&& turn) {
      std::lock_guard<std::mutex> lock(mutex);
      for (EngineResult& r : turn.results) {
        deliveries++;
        results[r.request_id] = r;
      }
      if (keep_turns) turns.push_back(std::move(turn));
      arrived.notify_all();
    };
  }
  EngineTurn next_turn() {
    std::unique_lock<std::mutex> lock(mutex);
    arrived.wait(lock, [&] { return !turns.empty(); });
    EngineTurn turn = std::move(turns.front());
    turns.pop_front();
    return turn;
  }
  EngineResult wait(uint64_t id) {
    std::unique_lock<std::mutex> lock(mutex);
    arrived.wait(lock, [&] { return results.count(id) > 0; });
    return results[id];
  }
};

std::shared_ptr<const s3::model::Qwen3Weights> tiny_weights(const s3test::TestModel& model) {
  return std::make_shared<const s3::model::Qwen3Weights>(
      s3::model::Qwen3Weights::from_tensors(model.config, model.named(), s3::model::Qwen3Weights::Storage::Borrow, "test model"));
}

std::vector<int32_t> prompt_of(int agent) {
  std::mt19937 rng(static_cast<uint32_t>(agent));
  std::vector<int32_t> tokens(size_t(3 + agent * 5));
  for (int32_t& t : tokens) t = int32_t(rng() % 512);
  return tokens;
}

// Each of `agents` sequences: prompt (after `common` tokens every agent shares), piece of 20, 2
// context tokens, piece of 20; callers on 3 threads. Each agent's output holds its tokens, draws
// and the bits of their log-probs.
std::vector<std::vector<int32_t>> run_agents(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, EngineOptions options,
                                             int agents, s3::ThreadPool& pool, int64_t* preemptions = nullptr,
                                             int64_t common = 0, int64_t* prefix_hits = nullptr) {
  Inbox inbox;
  Engine engine(weights, options, inbox.callback(), pool);
  std::vector<int32_t> shared(static_cast<size_t>(common));
  for (int64_t i = 0; i < common; i++) shared[size_t(i)] = int32_t((i * 37 + 11) % 512);
  // With a common prefix, one more sequence holding just it is prefilled first, so its full blocks
  // are cached before any agent arrives, whatever the threads' timing.
  uint64_t warm = 0;
  if (common > 0) {
    warm = engine.open_sequence();
    engine.append(warm, shared.data(), common);
    inbox.wait(engine.generate(warm, {1, {}, 1.0f, 99, 0}));
  }
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(agents));
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; c++) {
    callers.emplace_back([&, c] {
      for (int a = c; a < agents; a += 3) {
        const uint64_t s = engine.open_sequence();
        std::vector<int32_t> prompt = shared;
        const std::vector<int32_t> own = prompt_of(a);
        prompt.insert(prompt.end(), own.begin(), own.end());
        engine.append(s, prompt.data(), int64_t(prompt.size()));
        for (int piece = 0; piece < 2; piece++) {
          const EngineResult r = inbox.wait(engine.generate(s, {20, {}, 1.0f, uint64_t(a), 1}));
          out[size_t(a)].insert(out[size_t(a)].end(), r.tokens.begin(), r.tokens.end());
          out[size_t(a)].insert(out[size_t(a)].end(), r.draw_tokens.begin(), r.draw_tokens.end());
          for (float lp : r.logprobs) {
            int32_t bits;
            std::memcpy(&bits, &lp, sizeof bits);
            out[size_t(a)].push_back(bits);
          }
          const int32_t context[] = {1, 2};
          engine.append(s, context, 2);
        }
        engine.release(s);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  if (common > 0) engine.release(warm);
  if (options.device == Device::Cuda) {  // which kernels ran, and whether decode steps replayed graphs
    const s3::engine::RunnerDescription d = engine.description();
    std::printf("  %s; graphs: %s; gemm: %s\n", d.attention.c_str(), d.graphs.c_str(), d.gemm.c_str());
  }
  if (preemptions != nullptr) *preemptions = engine.stats().preemptions;
  if (prefix_hits != nullptr) *prefix_hits = engine.stats().prefix_hit_tokens;
  return out;
}

// run_agents in a cache small enough to preempt, checked against `expected` every time, and repeated
// (up to 5 runs) until a run did preempt: whether it does depends on how the caller threads'
// requests interleave, which a loaded machine can serialize (about 1 run in 40 under load).
// Returns that run's preemption count (0 only if none of the runs preempted) and prefix hits.
std::pair<int64_t, int64_t> run_agents_until_preempted(const std::shared_ptr<const s3::model::Qwen3Weights>& weights,
                                                       const EngineOptions& options, int agents, s3::ThreadPool& pool,
                                                       const std::vector<std::vector<int32_t>>& expected, int64_t common = 0) {
  int64_t preemptions = 0, hits = 0;
  for (int attempt = 0; attempt < 5 && preemptions == 0; attempt++) {
    CHECK(run_agents(weights, options, agents, pool, &preemptions, common, &hits) == expected);
  }
  return {preemptions, hits};
}

// The three caches the determinism tests compare: roomy, one sequence at a time, and `tight_blocks`
// blocks with `tight_context` positions (small enough to preempt).
struct CacheSettings {
  EngineOptions roomy, one_at_a_time, tight;
};

CacheSettings cache_settings(int64_t tight_blocks, int64_t tight_context, bool prefix_caching, Device device,
                             WeightFormat format = WeightFormat::Stored) {
  CacheSettings c;
  c.roomy.device = device;
  c.roomy.weight_format = format;
  c.roomy.num_blocks = 256;
  c.roomy.max_context = 256;
  c.roomy.prefix_caching = prefix_caching;
  c.one_at_a_time = c.roomy;
  c.one_at_a_time.limits = {1, 8};
  c.tight = c.roomy;
  c.tight.num_blocks = tight_blocks;
  c.tight.max_context = tight_context;
  c.tight.limits = {5, 24};
  return c;
}

// With `format` Fp8 the weights are quantized at load (on CUDA, block-scaled FP8 GEMMs over FP8
// activations quantized per row, where cuBLASLt offers them): still no token moves.
void batching_and_preemption_change_no_token(Device device, WeightFormat format = WeightFormat::Stored) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 3);
  const auto weights = tiny_weights(model);
  s3::ThreadPool pool(2);
  const CacheSettings c = cache_settings(8, 128, true, device, format);  // 128 positions for 12 agents of up to 100: preemption
  const auto expected = run_agents(weights, c.roomy, 12, pool);
  CHECK(run_agents(weights, c.one_at_a_time, 12, pool) == expected);
  CHECK(run_agents_until_preempted(weights, c.tight, 12, pool, expected).first > 0);
  CHECK_EQ(expected[0].size(), size_t(2 * 20 * 3));
}

// Agents whose prompts start with the same 70 tokens: with prefix caching each attaches the first 64
// positions (four full blocks) instead of computing them, and every token, draw and log-prob bit
// stays what the engine gives without the cache, in a roomy cache, one sequence at a time, and a
// cache small enough to preempt (where the cached blocks may be evicted with their holders).
void prefix_caching_changes_no_token(Device device) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 4);
  const auto weights = tiny_weights(model);
  s3::ThreadPool pool(2);
  const CacheSettings c = cache_settings(16, 256, false, device);  // 256 positions for 12 agents of up to 170: preemption
  const auto expected = run_agents(weights, c.roomy, 12, pool, nullptr, 70);
  for (EngineOptions options : {c.roomy, c.one_at_a_time, c.tight}) {
    options.prefix_caching = true;
    if (options.num_blocks == 16) {
      const auto [preemptions, hits] = run_agents_until_preempted(weights, options, 12, pool, expected, 70);
      CHECK(preemptions > 0);
      CHECK_EQ(hits % 16, int64_t(0));
      CHECK(hits >= 64);
    } else {
      int64_t hits = 0;
      CHECK(run_agents(weights, options, 12, pool, nullptr, 70, &hits) == expected);
      CHECK_EQ(hits % 16, int64_t(0));
      CHECK_EQ(hits, int64_t(12 * 64));
    }
  }
  // Without a shared prefix nothing is attached.
  EngineOptions cached = c.roomy;
  cached.prefix_caching = true;
  int64_t hits = -1;
  run_agents(weights, cached, 4, pool, nullptr, 0, &hits);
  CHECK_EQ(hits, int64_t(0));
}

// Blocks computed by older weights are never attached: after a swap, a sequence with the same
// prompt computes it afresh and samples what a new engine with the new weights samples.
void prefix_cache_keeps_weight_versions_apart(Device device) {
  const s3test::TestModel first = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 5);
  const s3test::TestModel second = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 6);
  s3::ThreadPool pool(2);
  EngineOptions options;
  options.device = device;
  options.num_blocks = 64;
  options.max_context = 256;
  std::vector<int32_t> prompt(50);
  for (size_t i = 0; i < prompt.size(); i++) prompt[i] = int32_t((i * 13 + 5) % 512);
  auto sample = [&](Engine& engine, Inbox& inbox) {
    const uint64_t s = engine.open_sequence();
    engine.append(s, prompt.data(), int64_t(prompt.size()));
    const EngineResult r = inbox.wait(engine.generate(s, {8, {}, 1.0f, 7, 0}));
    return std::make_pair(r.tokens, r.logprobs);
  };
  Inbox inbox;
  Engine engine(tiny_weights(first), options, inbox.callback(), pool);
  const auto old_result = sample(engine, inbox);  // stays open: its blocks stay cached
  CHECK(sample(engine, inbox) == old_result);
  CHECK_EQ(engine.stats().prefix_hit_tokens, int64_t(48));
  engine.swap_weights(tiny_weights(second));
  const auto new_result = sample(engine, inbox);
  CHECK_EQ(engine.stats().prefix_hit_tokens, int64_t(48));  // no hit on the old blocks
  Inbox fresh_inbox;
  Engine fresh(tiny_weights(second), options, fresh_inbox.callback(), pool);
  CHECK(sample(fresh, fresh_inbox) == new_result);
  CHECK(new_result != old_result);
}

void cancel_release_and_close_answer_every_request_once(Device device) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 4);
  const auto weights = tiny_weights(model);
  s3::ThreadPool pool(2);
  Inbox inbox;
  EngineOptions options;
  options.device = device;
  options.num_blocks = 64;
  options.max_context = 1024;
  auto engine = std::make_unique<Engine>(weights, options, inbox.callback(), pool);
  std::vector<uint64_t> requests;
  std::vector<uint64_t> sequences;
  for (int a = 0; a < 10; a++) {
    const uint64_t s = engine->open_sequence();
    const std::vector<int32_t> prompt = prompt_of(a);
    engine->append(s, prompt.data(), int64_t(prompt.size()));
    requests.push_back(engine->generate(s, {1024, {}, 1.0f, 1, 0}));
    sequences.push_back(s);
  }
  engine->cancel(requests[0]);
  engine->release(sequences[1]);
  CHECK_EQ(inbox.wait(requests[0]).finish, Finish::Cancelled);
  CHECK_EQ(inbox.wait(requests[1]).finish, Finish::Cancelled);
  CHECK_THROWS(std::invalid_argument, engine->generate(sequences[1], {1, {}, 1.0f, 1, 0}));
  const int32_t bad[] = {512};
  CHECK_THROWS(std::out_of_range, engine->append(sequences[0], bad, 1));
  engine->close();
  for (uint64_t id : requests) CHECK_EQ(inbox.wait(id).finish, Finish::Cancelled);
  CHECK_EQ(inbox.deliveries, int64_t(requests.size()));
  CHECK_THROWS(std::logic_error, engine->open_sequence());
  engine.reset();
  CHECK_EQ(inbox.deliveries, int64_t(requests.size()));
}

// A lockstep caller driving 4 agents with pieces of different lengths: each turn it reacts to the
// results (after a random pause of up to 3 ms per result, standing in for JavaScript's work) by
// appending two context tokens and asking for the agent's next piece, then proceeds. Returns, per
// turn, the engine's step count when the turn was handled, the request ids answered and their
// tokens: with lockstep that log is a function of the model alone, not of the pauses.
std::vector<int64_t> lockstep_log(const std::shared_ptr<const s3::model::Qwen3Weights>& weights, Device device, uint32_t pause_seed) {
  s3::ThreadPool pool(2);
  Inbox inbox;
  inbox.keep_turns = true;
  EngineOptions options;
  options.device = device;
  options.num_blocks = 64;
  options.max_context = 512;
  options.limits = {3, 16};  // 3 slots for 4 agents and small prefill chunks: admission order matters
  options.lockstep = true;
  Engine engine(weights, options, inbox.callback(), pool);
  std::mt19937 pauses(pause_seed);
  auto pause = [&] { std::this_thread::sleep_for(std::chrono::microseconds(pauses() % 3000)); };
  const int64_t piece_length[] = {3, 5, 7, 11};
  std::map<uint64_t, int> agent_of;  // request id → agent
  std::vector<uint64_t> sequences;
  std::vector<int> pieces_left(4, 4);
  auto ask = [&](int agent) {
    const int32_t context[] = {int32_t(10 + agent), 2};
    engine.append(sequences[size_t(agent)], context, 2);
    agent_of[engine.generate(sequences[size_t(agent)], {piece_length[agent], {}, 1.0f, uint64_t(agent), 0})] = agent;
  };
  for (int a = 0; a < 4; a++) {
    sequences.push_back(engine.open_sequence());
    const std::vector<int32_t> prompt = prompt_of(a);
    engine.append(sequences.back(), prompt.data(), int64_t(prompt.size()));
    pause();
    ask(a);
  }
  // Nothing runs before the first proceed, however long the caller takes.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_EQ(engine.stats().steps, int64_t(0));
  engine.proceed(0);
  std::vector<int64_t> log;
  int64_t turns_handled = 0;
  int open_pieces = 4;
  while (open_pieces > 0) {
    EngineTurn turn = inbox.next_turn();
    CHECK_EQ(int64_t(turn.number), ++turns_handled);
    log.push_back(int64_t(turn.number));
    log.push_back(engine.stats().steps);
    for (const EngineResult& r : turn.results) {
      const int agent = agent_of.at(r.request_id);
      log.push_back(agent);
      log.insert(log.end(), r.tokens.begin(), r.tokens.end());
      pause();
      open_pieces--;
      if (--pieces_left[size_t(agent)] > 0) {
        ask(agent);
        open_pieces++;
      }
    }
    engine.proceed(turn.number);
  }
  CHECK_EQ(engine.stats().turns, turns_handled);
  return log;
}

void lockstep_orders_steps_by_events_not_timing(Device device) {
  const s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), s3::DType::BF16, 8);
  const auto weights = tiny_weights(model);
  const std::vector<int64_t> expected = lockstep_log(weights, device, 1);
  CHECK(!expected.empty());
  CHECK(lockstep_log(weights, device, 2) == expected);
  CHECK(lockstep_log(weights, device, 3) == expected);
}

}  // namespace

TEST(engine_threads_lockstep_orders_steps_by_events_not_timing) { lockstep_orders_steps_by_events_not_timing(Device::Cpu); }
TEST(engine_threads_batching_and_preemption_change_no_token) { batching_and_preemption_change_no_token(Device::Cpu); }
TEST(engine_threads_batching_and_preemption_change_no_token_with_fp8_weights) {
  batching_and_preemption_change_no_token(Device::Cpu, WeightFormat::Fp8);
}
TEST(engine_threads_prefix_caching_changes_no_token) { prefix_caching_changes_no_token(Device::Cpu); }
TEST(engine_threads_prefix_cache_keeps_weight_versions_apart) { prefix_cache_keeps_weight_versions_apart(Device::Cpu); }
TEST(engine_threads_cancel_release_and_close_answer_every_request_once) { cancel_release_and_close_answer_every_request_once(Device::Cpu); }

TEST(cuda_engine_lockstep_orders_steps_by_events_not_timing) {
  s3test::require_cuda();
  lockstep_orders_steps_by_events_not_timing(Device::Cuda);
}
TEST(cuda_engine_batching_and_preemption_change_no_token) {
  s3test::require_cuda();
  batching_and_preemption_change_no_token(Device::Cuda);
}
TEST(cuda_engine_batching_and_preemption_change_no_token_with_fp8_weights) {
  s3test::require_cuda();
  batching_and_preemption_change_no_token(Device::Cuda, WeightFormat::Fp8);
}
TEST(cuda_engine_prefix_caching_changes_no_token) {
  s3test::require_cuda();
  prefix_caching_changes_no_token(Device::Cuda);
}
TEST(cuda_engine_prefix_cache_keeps_weight_versions_apart) {
  s3test::require_cuda();
  prefix_cache_keeps_weight_versions_apart(Device::Cuda);
}
TEST(cuda_engine_cancel_release_and_close_answer_every_request_once) {
  s3test::require_cuda();
  cancel_release_and_close_answer_every_request_once(Device::Cuda);
}
