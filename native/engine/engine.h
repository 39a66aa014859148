// engine.h: the in-process inference server shared by every agent (ARCHITECTURE.md). Callers
// open sequences that live as long as their agent, append context to them and ask for generation
// pieces; one scheduler thread gathers every pending request into continuously batched forward
// passes (scheduler.h) over a paged KV cache that is kept between pieces, so a continuing agent
// never re-prefills its history unless it was preempted. Every sample is keyed by (seed, token
// index, draw index), so batching order and limits never change a token. Results are handed to
// `on_result` on the scheduler thread. New weights are swapped in between batches without
// dropping sequences; cached keys and values computed by older weights are kept. Full blocks of
// history are shared between sequences that start alike (automatic prefix caching,
// engine/prefix_cache.h), which changes no bit of any result. Everything that touches the model
// and the device goes through a ModelRunner (model_runner.h): the CPU's, or the CUDA one.
//
// Results are handed over in turns: everything one step (or the reaping before it) finished, in
// one callback, numbered 1, 2, …. In lockstep mode (EngineOptions::lockstep) the engine runs no
// step until the caller has handled every turn delivered and queued what it wants done next
// (`proceed(turn)`), and a request, release, cancellation or weight swap holds it until the next
// `proceed`: which step a request joins then depends only on the order of engine steps and the
// caller's reactions, never on wall-clock timing (docs/determinism.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/kv_dtype.h"
#include "core/thread_pool.h"
#include "cpu/sampling.h"
#include "engine/block_manager.h"
#include "engine/model_runner.h"
#include "engine/prefix_cache.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "model/device.h"
#include "model/kv_cache.h"
#include "model/qwen3_weights.h"

namespace s3::engine {

struct EngineOptions {
  int64_t block_size = 16;          // positions per KV block, a multiple of 16
  int64_t num_blocks = 0;           // 0: as many as kv_cache_bytes holds
  int64_t kv_cache_bytes = int64_t(1) << 30;
  KvDtype kv_dtype = KvDtype::F32;  // cached keys/values (scores use it too)
  int64_t max_context = 0;          // 0: the model's max_position_embeddings, capped by the cache
  bool prefix_caching = true;       // share full KV blocks of identical history prefixes
  SchedulerLimits limits;
  model::Device device = model::Device::Cpu;              // resolved already (model/device.h)
  WeightFormat weight_format = WeightFormat::Stored;       // `--weights fp8` quantizes at load
  CudaGraphs cuda_graphs = CudaGraphs::FromEnvironment;   // decode steps through CUDA graphs (model_runner.h)
  bool lockstep = false;            // steps wait for the caller's proceed() after each turn (see above)
  int64_t first_version = 0;        // the version of the weights loaded first (a resumed run continues its count)
};

// A finished generation piece or score.
struct EngineResult {
  uint64_t request_id = 0;
  Finish finish = Finish::Stop;
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;        // of tokens; for a score, of tokens[1..] given their prefix
  std::vector<int32_t> draw_tokens;
  std::vector<float> draw_logprobs;
  int64_t policy_version = 0;
  std::string error;                  // Finish::Error only
};

// The results one turn finished, handed over together; turns are numbered from 1.
struct EngineTurn {
  uint64_t number = 0;
  std::vector<EngineResult> results;
};

struct EngineStats {
  int64_t max_sequences, max_batch_tokens, max_context, block_size;
  int64_t running, waiting, idle, open_sequences, preemptions;
  int64_t kv_blocks_used, kv_blocks_total;
  KvDtype kv_dtype;
  int64_t steps, generated_tokens, processed_tokens;
  int64_t prefix_hit_tokens;  // history positions taken from the prefix cache instead of computed
  double busy_seconds;
  int64_t policy_version;
  int64_t turns;         // turns delivered
  double held_seconds;   // lockstep: time the engine had work but waited for the caller's proceed()
};

class Engine {
 public:
  using ResultCallback = std::function<void(EngineTurn&&)>;

  // Starts the scheduler thread; on_result receives every turn on it. Throws std::invalid_argument for inconsistent options (for
  // example a cache too small for one sequence of max_context).
  Engine(std::shared_ptr<const model::Qwen3Weights> weights, EngineOptions options, ResultCallback on_result, ThreadPool& pool);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const model::Qwen3Config& config() const { return config_; }
  int64_t max_context() const { return max_context_; }
  model::Device device() const { return options_.device; }
  // What the runner computes with (device, GEMM path, attention kernels, decode graphs), as of the
  // last step.
  RunnerDescription description() const;

  // Every call below throws std::logic_error once the engine is closed, std::out_of_range for a
  // token outside the vocabulary or a history past max_context, and std::invalid_argument for an
  // unknown or released sequence or bad parameters; nothing changes when one throws.
  uint64_t open_sequence();
  // Context tokens, processed lazily by the next generate. Not while a request runs on it.
  void append(uint64_t sequence, const int32_t* tokens, int64_t count);
  // A generation piece; its result comes through on_result with the returned request id.
  uint64_t generate(uint64_t sequence, GenerateParams params);
  // The request ends with Finish::Cancelled and the tokens so far. Unknown or finished ids are ignored.
  void cancel(uint64_t request);
  // Forgets the sequence and frees its cache; a running request on it ends Cancelled. A no-op
  // once the engine is closed.
  void release(uint64_t sequence);
  // Log-probs of tokens[1..] each given its prefix, under the current weights (a scratch cache).
  uint64_t score(std::vector<int32_t> tokens);
  // Swaps the weights between batches; returns the new version. Same shape required.
  int64_t swap_weights(std::shared_ptr<const model::Qwen3Weights> weights);
  // The same with a trainer's parameters on the engine's device (only where takes_device_params()).
  int64_t swap_weights(std::shared_ptr<const model::Qwen3DeviceParamSnapshot> params);
  // Whether the runner takes device parameters (model_runner.h).
  bool takes_device_params() const { return runner_->takes_device_params(); }
  EngineStats stats() const;
  // Lockstep mode: the caller has handled every turn up to `handled` and queued its follow-ups; the
  // engine may run its next step once no later turn is unhandled. Ignored outside lockstep mode.
  void proceed(uint64_t handled);
  // Ends every pending generation as Cancelled (and fails pending scores), stops the thread.
  // Idempotent.
  void close();

 private:
  struct ScoreJob {
    uint64_t id;
    std::vector<int32_t> tokens;
  };
  struct StepOutput {
    std::vector<cpu::TokenDraw> draws;  // per sampled chunk, 1 + K
    std::string error;
  };
  // The scheduler thread's reusable buffers for one batch handed to the runner.
  struct StepInput {
    std::vector<int32_t> tokens;
    std::vector<cpu::AttentionSequence> sequences;
    std::vector<int64_t> rows;
    std::vector<RunnerSample> samples;
  };

  void loop();
  bool has_work_locked() const;
  // Lockstep: the caller has handled every turn and released the engine since its last call.
  bool may_step_locked() const;
  // In lockstep mode, a call that changes the engine's work holds it until the next proceed().
  void hold_locked();
  // Numbers the finished results as the next turn (nothing when empty).
  EngineTurn next_turn_locked(std::vector<EngineResult>&& results);
  Sequence& live_sequence_locked(uint64_t id);
  void check_tokens(const int32_t* tokens, int64_t count) const;
  void end_request_locked(Request* request, Finish finish, std::vector<EngineResult>& out);
  void reap_locked(std::vector<EngineResult>& out);
  void run_batch(const std::vector<ScheduledChunk>& batch, StepOutput& output);
  EngineResult run_score(const ScoreJob& job);
  // After a batch computed positions [start, num_cached) of s with weights `version`: registers
  // the full blocks this completed in the prefix cache while all of s's history came from them.
  void remember_full_blocks_locked(Sequence& s, int64_t start, int64_t version);

  model::Qwen3Config config_;
  EngineOptions options_;
  int64_t max_context_ = 0;
  ResultCallback on_result_;
  ThreadPool& pool_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool closed_ = false;
  // Taken by the runner between batches: the latest swap's, host weights or device parameters.
  std::shared_ptr<const model::Qwen3Weights> next_weights_;
  std::shared_ptr<const model::Qwen3DeviceParamSnapshot> next_device_params_;
  int64_t version_ = 0;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> sequences_;
  std::unordered_map<uint64_t, std::unique_ptr<Request>> requests_;
  std::deque<ScoreJob> scores_;
  std::vector<uint64_t> released_;  // released sequences the scheduler thread still has to free
  std::vector<EngineResult> answered_;  // requests answered without a step (no room left), delivered by the thread
  uint64_t turns_delivered_ = 0, turns_handled_ = 0;
  bool held_ = false;               // lockstep: a call changed the work since the last proceed()
  double held_seconds_ = 0;
  std::unique_ptr<PrefixCache> prefix_cache_;  // null without prefix caching
  BlockManager blocks_;
  Scheduler scheduler_;
  int64_t steps_ = 0, generated_ = 0, processed_ = 0;
  double busy_seconds_ = 0;

  // Owned by the scheduler thread.
  std::unique_ptr<ModelRunner> runner_;
  RunnerDescription description_;  // refreshed after each step, under mutex_
  StepInput step_;
  std::thread thread_;
};

}  // namespace s3::engine
