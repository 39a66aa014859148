// engine.cpp: the scheduler thread and request bookkeeping; see engine.h. The model and the device
// are the runner's (model_runner.h).
#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>


namespace s3::engine {
namespace {

int64_t resolve_num_blocks(const model::Qwen3Config& c, const EngineOptions& o) {
  if (o.block_size <= 0 || o.block_size % 16 != 0) {
    throw std::invalid_argument("Engine: blockSize must be a positive multiple of 16, got " + std::to_string(o.block_size));
  }
  if (o.num_blocks < 0) throw std::invalid_argument("Engine: numBlocks must not be negative");
  if (o.num_blocks > 0) return o.num_blocks;
  return std::max<int64_t>(1, o.kv_cache_bytes / model::KvCache::bytes_per_block(c, o.block_size, o.kv_dtype));
}

int64_t resolve_max_context(const model::Qwen3Config& c, const EngineOptions& o, int64_t num_blocks) {
  const int64_t cache_positions = num_blocks * o.block_size;
  if (o.max_context < 0) throw std::invalid_argument("Engine: maxContext must not be negative");
  if (o.max_context > c.max_position_embeddings) {
    throw std::invalid_argument("Engine: maxContext " + std::to_string(o.max_context) + " is past the model's " +
                                std::to_string(c.max_position_embeddings) + " positions");
  }
  if (o.max_context > cache_positions) {
    throw std::invalid_argument("Engine: maxContext " + std::to_string(o.max_context) + " does not fit the KV cache of " +
                                std::to_string(cache_positions) + " positions; raise numBlocks");
  }
  return o.max_context > 0 ? o.max_context : std::min(c.max_position_embeddings, cache_positions);
}

}  // namespace

Engine::Engine(std::shared_ptr<const model::Qwen3Weights> weights, EngineOptions options, ResultCallback on_result, ThreadPool& pool)
    : config_(weights->config()),
      options_(options),
      on_result_(std::move(on_result)),
      pool_(pool),
      prefix_cache_(options_.prefix_caching ? std::make_unique<PrefixCache>(options_.block_size) : nullptr),
      blocks_(resolve_num_blocks(config_, options_), options_.block_size),
      scheduler_(blocks_, options_.limits, prefix_cache_.get()) {
  blocks_.set_prefix_cache(prefix_cache_.get());
  if (options_.first_version < 0) throw std::invalid_argument("Engine: policyVersion must not be negative");
  version_ = options_.first_version;
  max_context_ = resolve_max_context(config_, options_, blocks_.num_blocks());
  RunnerOptions runner;
  runner.device = options_.device;
  runner.block_size = options_.block_size;
  runner.num_blocks = blocks_.num_blocks();
  runner.kv_dtype = options_.kv_dtype;
  runner.max_batch_tokens = options_.limits.max_batch_tokens;
  runner.max_sequences = options_.limits.max_sequences;
  runner.weight_format = options_.weight_format;
  runner.cuda_graphs = options_.cuda_graphs;
  runner.max_context = max_context_;
  runner_ = make_model_runner(runner, std::move(weights), pool_);
  description_ = runner_->describe();
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() { close(); }

void Engine::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::check_tokens(const int32_t* tokens, int64_t count) const {
  for (int64_t i = 0; i < count; i++) {
    if (tokens[i] < 0 || tokens[i] >= config_.vocab_size) {
      throw std::out_of_range("token " + std::to_string(i) + " is " + std::to_string(tokens[i]) + ", outside the vocabulary [0, " +
                              std::to_string(config_.vocab_size) + ")");
    }
  }
}

Sequence& Engine::live_sequence_locked(uint64_t id) {
  if (closed_) throw std::logic_error("the engine is closed");
  auto it = sequences_.find(id);
  if (it == sequences_.end() || it->second->released) {
    throw std::invalid_argument("sequence " + std::to_string(id) + " is unknown or released");
  }
  return *it->second;
}

uint64_t Engine::open_sequence() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) throw std::logic_error("the engine is closed");
  auto sequence = std::make_unique<Sequence>();
  sequence->id = next_id_++;
  const uint64_t id = sequence->id;
  sequences_.emplace(id, std::move(sequence));
  return id;
}

void Engine::append(uint64_t id, const int32_t* tokens, int64_t count) {
  check_tokens(tokens, count);
  std::lock_guard<std::mutex> lock(mutex_);
  Sequence& s = live_sequence_locked(id);
  if (s.request != nullptr) throw std::invalid_argument("sequence " + std::to_string(id) + " has a generation in progress");
  if (int64_t(s.tokens.size()) + count > max_context_) {
    throw std::out_of_range("sequence " + std::to_string(id) + " would hold " + std::to_string(int64_t(s.tokens.size()) + count) +
                            " tokens, past the context limit of " + std::to_string(max_context_));
  }
  s.tokens.insert(s.tokens.end(), tokens, tokens + count);
}

uint64_t Engine::generate(uint64_t id, GenerateParams params) {
  if (params.max_new < 1 || params.max_new > kMaxPieceTokens) {
    throw std::out_of_range("maxNew must be in [1, " + std::to_string(kMaxPieceTokens) + "], got " + std::to_string(params.max_new));
  }
  if (!(params.temperature >= 0.0f) || params.temperature > 1e6f) throw std::out_of_range("temperature must be a finite number ≥ 0");
  if (params.draws < 0 || params.draws > kMaxExtraDraws) {
    throw std::out_of_range("draws must be in [0, " + std::to_string(kMaxExtraDraws) + "], got " + std::to_string(params.draws));
  }
  uint64_t request_id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Sequence& s = live_sequence_locked(id);
    if (s.request != nullptr) throw std::invalid_argument("sequence " + std::to_string(id) + " already has a generation in progress");
    if (s.tokens.empty()) throw std::invalid_argument("sequence " + std::to_string(id) + " is empty: append context before generating");
    auto request = std::make_unique<Request>();
    request->id = request_id = next_id_++;
    request->sequence = &s;
    request->params = std::move(params);
    s.request = request.get();
    if (int64_t(s.tokens.size()) >= max_context_) {
      // Nothing fits: the piece ends without a forward pass, answered in the scheduler thread's next turn.
      EngineResult r;
      r.request_id = request_id;
      r.finish = Finish::Context;
      r.policy_version = version_;
      s.request = nullptr;
      answered_.push_back(std::move(r));
    } else {
      requests_.emplace(request_id, std::move(request));
      scheduler_.enqueue(&s);
    }
    hold_locked();
  }
  wake_.notify_all();
  return request_id;
}

void Engine::cancel(uint64_t request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = requests_.find(request);
    if (it == requests_.end()) return;
    it->second->cancelled = true;
    hold_locked();
  }
  wake_.notify_all();
}

void Engine::release(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;  // close() freed everything already
    Sequence& s = live_sequence_locked(id);
    s.released = true;
    if (s.request != nullptr) s.request->cancelled = true;
    released_.push_back(id);
    hold_locked();
  }
  wake_.notify_all();
}

uint64_t Engine::score(std::vector<int32_t> tokens) {
  check_tokens(tokens.data(), int64_t(tokens.size()));
  if (tokens.size() < 2) throw std::invalid_argument("score needs at least 2 tokens");
  if (int64_t(tokens.size()) > max_context_) {
    throw std::out_of_range("score: " + std::to_string(tokens.size()) + " tokens are past the context limit of " + std::to_string(max_context_));
  }
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw std::logic_error("the engine is closed");
    id = next_id_++;
    scores_.push_back({id, std::move(tokens)});
    hold_locked();
  }
  wake_.notify_all();
  return id;
}

namespace {

void require_same_shape(const model::Qwen3Config& c, const model::Qwen3Config& engine) {
  if (c.hidden_size != engine.hidden_size || c.num_hidden_layers != engine.num_hidden_layers ||
      c.num_attention_heads != engine.num_attention_heads || c.num_key_value_heads != engine.num_key_value_heads ||
      c.head_dim != engine.head_dim || c.intermediate_size != engine.intermediate_size || c.vocab_size != engine.vocab_size) {
    throw std::invalid_argument("swap_weights: the new weights have a different shape than the engine's model");
  }
}

}  // namespace

int64_t Engine::swap_weights(std::shared_ptr<const model::Qwen3Weights> weights) {
  require_same_shape(weights->config(), config_);
  int64_t version;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw std::logic_error("the engine is closed");
    next_weights_ = std::move(weights);
    next_device_params_ = nullptr;
    version = version_ + 1;
    hold_locked();
  }
  wake_.notify_all();
  return version;
}

int64_t Engine::swap_weights(std::shared_ptr<const model::Qwen3DeviceParamSnapshot> params) {
  require_same_shape(params->config, config_);
  if (!takes_device_params()) throw std::invalid_argument("swap_weights: this engine's runner takes host weights only");
  int64_t version;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw std::logic_error("the engine is closed");
    next_device_params_ = std::move(params);
    next_weights_ = nullptr;
    version = version_ + 1;
    hold_locked();
  }
  wake_.notify_all();
  return version;
}

RunnerDescription Engine::description() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return description_;
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return EngineStats{options_.limits.max_sequences, options_.limits.max_batch_tokens, max_context_, options_.block_size,
                     scheduler_.num_running(), scheduler_.num_waiting(), scheduler_.num_idle(), int64_t(sequences_.size()),
                     scheduler_.num_preemptions(), blocks_.num_used(), blocks_.num_blocks(), options_.kv_dtype, steps_,
                     generated_, processed_, scheduler_.prefix_hit_tokens(), busy_seconds_, version_,
                     int64_t(turns_delivered_), held_seconds_};
}

void Engine::proceed(uint64_t handled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!options_.lockstep) return;
    turns_handled_ = std::max(turns_handled_, std::min(handled, turns_delivered_));
    held_ = false;
  }
  wake_.notify_all();
}

bool Engine::has_work_locked() const {
  return !requests_.empty() || !scores_.empty() || !released_.empty() || !answered_.empty() || next_weights_ != nullptr ||
         next_device_params_ != nullptr;
}

bool Engine::may_step_locked() const { return !options_.lockstep || (!held_ && turns_handled_ == turns_delivered_); }

void Engine::hold_locked() {
  if (options_.lockstep) held_ = true;
}

EngineTurn Engine::next_turn_locked(std::vector<EngineResult>&& results) {
  EngineTurn turn;
  if (results.empty()) return turn;
  turn.number = ++turns_delivered_;
  turn.results = std::move(results);
  return turn;
}

void Engine::end_request_locked(Request* request, Finish finish, std::vector<EngineResult>& out) {
  Sequence* s = request->sequence;
  EngineResult r;
  r.request_id = request->id;
  r.finish = finish;
  r.tokens = std::move(request->tokens);
  r.logprobs = std::move(request->logprobs);
  r.draw_tokens = std::move(request->draw_tokens);
  r.draw_logprobs = std::move(request->draw_logprobs);
  r.policy_version = request->policy_version >= 0 ? request->policy_version : version_;
  out.push_back(std::move(r));
  s->request = nullptr;
  scheduler_.finish(s);
  requests_.erase(request->id);
}

void Engine::reap_locked(std::vector<EngineResult>& out) {
  std::vector<Request*> cancelled;
  for (auto& [id, request] : requests_) {
    if (request->cancelled) cancelled.push_back(request.get());
  }
  for (Request* request : cancelled) end_request_locked(request, Finish::Cancelled, out);
  for (EngineResult& r : answered_) out.push_back(std::move(r));
  answered_.clear();
  for (uint64_t id : released_) {
    auto it = sequences_.find(id);
    scheduler_.drop(it->second.get());
    sequences_.erase(it);
  }
  released_.clear();
}

void Engine::run_batch(const std::vector<ScheduledChunk>& batch, StepOutput& output) {
  StepInput& in = step_;
  in.tokens.clear();
  in.sequences.clear();
  in.rows.clear();
  in.samples.clear();
  int64_t width = 1;
  for (const ScheduledChunk& chunk : batch) {
    const Sequence& s = *chunk.sequence;
    in.tokens.insert(in.tokens.end(), s.tokens.begin() + chunk.start, s.tokens.begin() + chunk.start + chunk.length);
    in.sequences.push_back({chunk.start, chunk.length, s.block_table.data(), int64_t(s.block_table.size())});
    if (chunk.sample) {
      const GenerateParams& params = s.request->params;
      in.rows.push_back(int64_t(in.tokens.size()) - 1);
      in.samples.push_back({params.temperature, params.seed, uint64_t(chunk.start + chunk.length), 1 + params.draws});
      width = std::max(width, 1 + params.draws);
    }
  }
  output.draws.assign(in.samples.size() * size_t(width), cpu::TokenDraw{0, 0.0f});
  try {
    const RunnerBatch step{{in.tokens.data(), in.sequences.data(), int64_t(in.sequences.size()), in.rows.data(), int64_t(in.rows.size())},
                           in.samples.data(), width};
    runner_->run_batch(step, output.draws.data());
  } catch (const std::exception& e) {
    output.error = e.what();
  }
}

void Engine::remember_full_blocks_locked(Sequence& s, int64_t start, int64_t version) {
  if (prefix_cache_ == nullptr) return;
  if (start == 0) {
    s.computed_version = version;
  } else if (s.computed_version != version) {
    s.computed_version = kMixedVersions;  // later blocks depend on keys from other weights
  }
  if (s.computed_version != version) return;
  const int64_t bs = blocks_.block_size();
  for (int64_t i = int64_t(s.block_keys.size()); (i + 1) * bs <= s.num_cached; i++) {
    const int32_t* tokens = s.tokens.data() + i * bs;
    const uint64_t parent = i > 0 ? s.block_keys[size_t(i - 1)] : 0;
    const uint64_t key = prefix_cache_->key(parent, version, tokens);
    prefix_cache_->insert(key, parent, version, tokens, s.block_table[size_t(i)]);
    s.block_keys.push_back(key);
  }
}

EngineResult Engine::run_score(const ScoreJob& job) {
  EngineResult r;
  r.request_id = job.id;
  try {
    r.logprobs = runner_->score(job.tokens.data(), int64_t(job.tokens.size()));
  } catch (const std::exception& e) {
    r.finish = Finish::Error;
    r.error = e.what();
  }
  return r;
}

void Engine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  // Hands finished results over as one turn, outside the lock.
  auto deliver = [&](std::vector<EngineResult>&& results) {
    EngineTurn turn = next_turn_locked(std::move(results));
    if (turn.number == 0) return;
    lock.unlock();
    on_result_(std::move(turn));
    lock.lock();
  };
  for (;;) {
    if (has_work_locked() && !may_step_locked()) {
      // Lockstep: work is waiting for the caller to handle its turns (or to release a hold).
      const auto t0 = std::chrono::steady_clock::now();
      wake_.wait(lock, [&] { return closed_ || may_step_locked(); });
      held_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    wake_.wait(lock, [&] { return closed_ || (has_work_locked() && may_step_locked()); });
    std::vector<EngineResult> done;
    if (closed_) {
      std::vector<Request*> pending;
      for (auto& [id, request] : requests_) pending.push_back(request.get());
      for (Request* request : pending) end_request_locked(request, Finish::Cancelled, done);
      for (EngineResult& r : answered_) done.push_back(std::move(r));
      answered_.clear();
      for (ScoreJob& job : scores_) {
        EngineResult r;
        r.request_id = job.id;
        r.finish = Finish::Error;
        r.error = "the engine was closed before the score ran";
        done.push_back(std::move(r));
      }
      scores_.clear();
      deliver(std::move(done));
      return;
    }
    reap_locked(done);
    if (!done.empty()) {
      // Cancelled and unanswerable requests form a turn of their own; in lockstep mode the caller
      // reacts to it before the next step is scheduled.
      deliver(std::move(done));
      done.clear();
      if (!may_step_locked() || !has_work_locked()) continue;
    }
    std::shared_ptr<const model::Qwen3Weights> incoming = std::move(next_weights_);
    std::shared_ptr<const model::Qwen3DeviceParamSnapshot> incoming_device = std::move(next_device_params_);
    next_weights_ = nullptr;
    next_device_params_ = nullptr;
    if (incoming != nullptr || incoming_device != nullptr) version_++;
    const int64_t version = version_;
    const std::vector<ScheduledChunk> batch = scheduler_.schedule(version);
    std::vector<ScoreJob> scores;  // one per step, so scoring never stalls generation for long
    if (!scores_.empty()) {
      scores.push_back(std::move(scores_.front()));
      scores_.pop_front();
    }
    lock.unlock();

    StepOutput output;
    if (incoming != nullptr || incoming_device != nullptr) {
      // Between batches: the runner takes the new weights (a device runner copies them over).
      try {
        if (incoming != nullptr) {
          runner_->set_weights(std::move(incoming));
        } else {
          runner_->set_weights_from_device(std::move(incoming_device));
        }
      } catch (const std::exception& e) {
        output.error = std::string("installing weights version ") + std::to_string(version) + ": " + e.what();
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!batch.empty() && output.error.empty()) run_batch(batch, output);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The runner's counters (decode graphs captured and replayed) as of this step.
    RunnerDescription described = batch.empty() ? RunnerDescription{} : runner_->describe();
    for (const ScoreJob& job : scores) {
      EngineResult r = output.error.empty() ? run_score(job) : EngineResult{job.id, Finish::Error, {}, {}, {}, {}, 0, output.error};
      r.policy_version = version;
      done.push_back(std::move(r));
    }

    lock.lock();
    if (!batch.empty()) {
      steps_++;
      busy_seconds_ += seconds;
      description_ = std::move(described);
      int64_t width = 1;
      for (const ScheduledChunk& chunk : batch) {
        if (chunk.sample) width = std::max(width, 1 + chunk.sequence->request->params.draws);
      }
      size_t sampled = 0;
      for (const ScheduledChunk& chunk : batch) {
        Sequence& s = *chunk.sequence;
        Request& request = *s.request;
        if (!output.error.empty()) {
          end_request_locked(&request, Finish::Error, done);
          done.back().error = output.error;
          continue;
        }
        s.num_cached += chunk.length;
        processed_ += chunk.length;
        remember_full_blocks_locked(s, chunk.start, version);
        if (!chunk.sample) continue;
        const cpu::TokenDraw* draws = &output.draws[sampled++ * size_t(width)];
        if (request.cancelled) continue;  // reaped at the next step with the tokens so far
        if (request.policy_version < 0) request.policy_version = version;
        s.tokens.push_back(draws[0].token);
        request.tokens.push_back(draws[0].token);
        request.logprobs.push_back(draws[0].logprob);
        for (int64_t k = 1; k <= request.params.draws; k++) {
          request.draw_tokens.push_back(draws[k].token);
          request.draw_logprobs.push_back(draws[k].logprob);
        }
        generated_++;
        const auto& stops = request.params.stop_tokens;
        if (std::find(stops.begin(), stops.end(), draws[0].token) != stops.end()) {
          end_request_locked(&request, Finish::Stop, done);
        } else if (int64_t(request.tokens.size()) >= request.params.max_new) {
          end_request_locked(&request, Finish::Length, done);
        } else if (int64_t(s.tokens.size()) >= max_context_) {
          end_request_locked(&request, Finish::Context, done);
        }
      }
    }
    if (!done.empty()) {
      deliver(std::move(done));
    } else if (batch.empty() && scores.empty() && !requests_.empty()) {
      // The scheduler always admits the queue's front when nothing runs, so this is not expected;
      // should it happen, sleep briefly rather than spin.
      wake_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
}

}  // namespace s3::engine
