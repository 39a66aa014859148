// N-API bindings of native/engine; see engine.h. Results reach JS through a thread-safe function
// that is referenced only while requests are pending (the engine keeps no idle process alive),
// and the JS object holds a strong reference to itself over the same span, so it cannot be
// collected while the scheduler thread may still answer.
#include "napi/engine.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/sampling.h"
#include "engine/engine.h"
#include "model/kv_cache.h"
#include "model/qwen3_weights.h"
#include "model/weight_link.h"
#include "napi/collective.h"
#include "napi/device_option.h"
#include "napi/guarded.h"
#include "napi/options.h"
#include "napi/trainer_handle.h"

namespace s3::napi {
namespace {

uint64_t id_argument(const Napi::CallbackInfo& info, size_t index, const char* what) {
  if (info.Length() <= index || !info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return uint64_t(info[index].As<Napi::Number>().Int64Value());
}

std::vector<int32_t> token_argument(Napi::Env env, Napi::Value value, const char* what) {
  if (value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == napi_int32_array) {
    const Napi::Int32Array a = value.As<Napi::Int32Array>();
    return std::vector<int32_t>(a.Data(), a.Data() + a.ElementLength());
  }
  throw Napi::TypeError::New(env, std::string(what) + " must be an Int32Array");
}

uint64_t seed_argument(Napi::Env env, Napi::Value value) {
  if (value.IsBigInt()) {
    bool lossless = true;
    const uint64_t seed = value.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::RangeError::New(env, "seed must fit in 64 unsigned bits");
    return seed;
  }
  if (value.IsNumber()) {
    const double d = value.As<Napi::Number>().DoubleValue();
    if (d < 0 || d != double(int64_t(d))) throw Napi::RangeError::New(env, "seed must be a non-negative integer");
    return uint64_t(d);
  }
  throw Napi::TypeError::New(env, "seed must be a bigint or a number");
}

const char* finish_name(engine::Finish finish) {
  switch (finish) {
    case engine::Finish::Stop: return "stop";
    case engine::Finish::Length: return "length";
    case engine::Finish::Context: return "context";
    case engine::Finish::Cancelled: return "cancelled";
    case engine::Finish::Error: return "error";
  }
  return "error";
}

template <typename T, typename Array>
Array typed_copy(Napi::Env env, const std::vector<T>& values) {
  Array a = Array::New(env, values.size());
  std::copy(values.begin(), values.end(), a.Data());
  return a;
}

class ReceiveWeightsWorker;

class Engine : public Napi::ObjectWrap<Engine> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Engine",
                       {InstanceMethod("openSequence", &Engine::open_sequence), InstanceMethod("append", &Engine::append),
                        InstanceMethod("generate", &Engine::generate), InstanceMethod("cancel", &Engine::cancel),
                        InstanceMethod("release", &Engine::release), InstanceMethod("score", &Engine::score),
                        InstanceMethod("loadWeights", &Engine::load_weights),
                        InstanceMethod("loadWeightsFromTrainer", &Engine::load_weights_from_trainer),
                        InstanceMethod("receiveWeights", &Engine::receive_weights),
                        InstanceMethod("stats", &Engine::stats), InstanceMethod("proceed", &Engine::proceed),
                        InstanceMethod("close", &Engine::close)});
  }

  // new Engine(directory, {blockSize, numBlocks, kvCacheBytes, kvCacheDtype, maxContext, maxSequences, maxBatchTokens,
  // prefixCaching, device: 'cpu' | 'cuda' | 'auto', weights: 'stored' | 'fp8', lockstep, onTurn(turn)}).
  explicit Engine(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Engine>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "new Engine(directory, options): directory must be a string");
    const Options read(env, info.Length() > 1 ? info[1] : env.Undefined(), "Engine options");
    const Napi::Object& options = read.object();
    engine::EngineOptions o;
    o.block_size = read.integer("blockSize", o.block_size);
    o.num_blocks = read.integer("numBlocks", o.num_blocks);
    o.kv_cache_bytes = read.integer("kvCacheBytes", o.kv_cache_bytes);
    o.kv_dtype = kv_dtype_option(env, options, "Engine option", o.kv_dtype);
    o.max_context = read.integer("maxContext", o.max_context);
    o.limits.max_sequences = read.integer("maxSequences", o.limits.max_sequences);
    o.limits.max_batch_tokens = read.integer("maxBatchTokens", o.limits.max_batch_tokens);
    o.first_version = read.integer("policyVersion", o.first_version);
    o.prefix_caching = read.boolean("prefixCaching", o.prefix_caching);
    o.lockstep = read.boolean("lockstep", o.lockstep);
    const Napi::Value on_turn = read.get("onTurn");
    if (!on_turn.IsUndefined()) {
      if (!on_turn.IsFunction()) throw Napi::TypeError::New(env, "Engine options: onTurn must be a function");
      on_turn_ = Napi::Weak(on_turn.As<Napi::Function>());  // the caller keeps it alive (no cycle through this object)
    }
    o.device = device_option(env, options, "Engine options");
    o.weight_format = weight_format_option(env, options, "Engine options");
    const std::string directory = info[0].As<Napi::String>();
    auto weights = guarded(env, [&] { return std::make_shared<const model::Qwen3Weights>(model::Qwen3Weights::load(directory)); });
    tsfn_ = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "s3-engine", 0, 1);
    tsfn_.Unref(env);
    Napi::ThreadSafeFunction tsfn = tsfn_;
    auto on_result = [this, tsfn](engine::EngineTurn&& turn) mutable {
      auto* data = new engine::EngineTurn(std::move(turn));
      auto deliver = [this](Napi::Env env, Napi::Function, engine::EngineTurn* t) { this->deliver(env, t); };
      if (tsfn.NonBlockingCall(data, deliver) != napi_ok) delete data;
    };
    try {
      engine_ = std::make_unique<engine::Engine>(std::move(weights), o, on_result, default_thread_pool());
    } catch (const std::exception& e) {
      tsfn_.Release();
      throw Napi::RangeError::New(env, e.what());
    }
  }

  ~Engine() override { shut_down(); }

 private:
  void shut_down() {
    if (tsfn_released_) return;
    engine_->close();  // every pending request is answered (Cancelled) before the thread exits
    tsfn_.Release();   // queued answers still run
    tsfn_released_ = true;
  }

  // Settles the promises of one turn's results, then tells onTurn (if given) the turn's number: a
  // lockstep caller proceeds once the reactions those promises start have run.
  void deliver(Napi::Env env, engine::EngineTurn* data) {
    std::unique_ptr<engine::EngineTurn> turn(data);
    if (env == nullptr) return;  // the environment is going away
    Napi::HandleScope scope(env);
    for (engine::EngineResult& result : turn->results) settle(env, result);
    if (on_turn_.IsEmpty()) return;
    const Napi::Function on_turn = on_turn_.Value();
    if (!on_turn.IsEmpty()) on_turn.Call({Napi::Number::New(env, double(turn->number))});
  }

  void settle(Napi::Env env, const engine::EngineResult& result) {
    auto it = pending_.find(result.request_id);
    if (it == pending_.end()) return;
    Napi::Promise::Deferred deferred = it->second;
    pending_.erase(it);
    if (pending_.empty()) {
      tsfn_.Unref(env);
      Unref();
    }
    if (result.finish == engine::Finish::Error) {
      deferred.Reject(Napi::Error::New(env, "engine: " + result.error).Value());
      return;
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", double(result.request_id));
    o.Set("finish", finish_name(result.finish));
    o.Set("tokens", typed_copy<int32_t, Napi::Int32Array>(env, result.tokens));
    o.Set("logprobs", typed_copy<float, Napi::Float32Array>(env, result.logprobs));
    o.Set("drawTokens", typed_copy<int32_t, Napi::Int32Array>(env, result.draw_tokens));
    o.Set("drawLogprobs", typed_copy<float, Napi::Float32Array>(env, result.draw_logprobs));
    o.Set("policyVersion", double(result.policy_version));
    deferred.Resolve(o);
  }

  // Registers the promise of request `id`, taking the references that keep answers deliverable.
  Napi::Promise track(Napi::Env env, uint64_t id) {
    if (pending_.empty()) {
      tsfn_.Ref(env);
      Ref();
    }
    auto deferred = Napi::Promise::Deferred::New(env);
    pending_.emplace(id, deferred);
    return deferred.Promise();
  }

  Napi::Value open_sequence(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), double(guarded(info.Env(), [&] { return engine_->open_sequence(); })));
  }

  // append(sequence, tokens: Int32Array)
  Napi::Value append(const Napi::CallbackInfo& info) {
    const uint64_t sequence = id_argument(info, 0, "append(sequence, tokens): sequence");
    const std::vector<int32_t> tokens = token_argument(info.Env(), info[1], "append(sequence, tokens): tokens");
    guarded(info.Env(), [&] {
      engine_->append(sequence, tokens.data(), int64_t(tokens.size()));
      return 0;
    });
    return info.Env().Undefined();
  }

  // generate(sequence, {maxNew, stopTokenIds: Int32Array, temperature, seed, draws}) → {id, promise}
  Napi::Value generate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const uint64_t sequence = id_argument(info, 0, "generate(sequence, options): sequence");
    if (info.Length() < 2 || !info[1].IsObject()) throw Napi::TypeError::New(env, "generate(sequence, options): options must be an object");
    const Options options(env, info[1], "generate");
    engine::GenerateParams params;
    params.max_new = options.required_integer("maxNew");
    params.stop_tokens = token_argument(env, options.get("stopTokenIds"), "generate: stopTokenIds");
    params.temperature = float(options.required_number("temperature"));
    params.seed = seed_argument(env, options.get("seed"));
    params.draws = options.integer("draws", 0);
    const uint64_t id = guarded(env, [&] { return engine_->generate(sequence, std::move(params)); });
    Napi::Object out = Napi::Object::New(env);
    out.Set("id", double(id));
    out.Set("promise", track(env, id));
    return out;
  }

  Napi::Value cancel(const Napi::CallbackInfo& info) {
    engine_->cancel(id_argument(info, 0, "cancel(requestId): requestId"));
    return info.Env().Undefined();
  }

  Napi::Value release(const Napi::CallbackInfo& info) {
    const uint64_t sequence = id_argument(info, 0, "release(sequence): sequence");
    guarded(info.Env(), [&] {
      engine_->release(sequence);
      return 0;
    });
    return info.Env().Undefined();
  }

  // score(tokens: Int32Array) → Promise<{logprobs, policyVersion, ...}>: log-probs of tokens[1..].
  Napi::Value score(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<int32_t> tokens = token_argument(env, info.Length() > 0 ? info[0] : env.Undefined(), "score(tokens): tokens");
    const uint64_t id = guarded(env, [&] { return engine_->score(std::move(tokens)); });
    return track(env, id);
  }

  // loadWeights(directory) → the version pieces carry once the swap has happened (between batches).
  Napi::Value load_weights(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "loadWeights(directory): directory must be a string");
    const std::string directory = info[0].As<Napi::String>();
    return Napi::Number::New(env, double(guarded(env, [&] {
      auto weights = std::make_shared<const model::Qwen3Weights>(model::Qwen3Weights::load(directory));
      require_engine_shape(weights->config(), "the checkpoint in " + directory);
      return engine_->swap_weights(std::move(weights));
    })));
  }

  // loadWeightsFromTrainer(trainer: native Trainer) → as loadWeights, with f32 copies of the trainer's
  // current parameters made in place (no trip through JS); a CUDA trainer's are copied on the device
  // when this engine's runner converts them there (takes_device_params). Refused while the trainer
  // accumulates.
  Napi::Value load_weights_from_trainer(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const train::Trainer& trainer =
        unwrap_idle_trainer(env, info.Length() > 0 ? info[0] : env.Undefined(), "loadWeightsFromTrainer(trainer): trainer");
    return Napi::Number::New(env, double(guarded(env, [&] {
      require_engine_shape(trainer.config(), "the trainer's model");
      if (engine_->takes_device_params()) {
        if (auto on_device = trainer.device_snapshot()) return engine_->swap_weights(std::move(on_device));
      }
      return engine_->swap_weights(std::make_shared<const model::Qwen3Weights>(trainer.weights()));
    })));
  }

  // receiveWeights(collective) → Promise<{weightsVersion, bytes, seconds}>: the parameters rank 0 of a
  // two-rank weight link sends (model/weight_link.h), received on the libuv pool while the engine
  // keeps serving, then swapped in between batches as loadWeightsFromTrainer's are.
  Napi::Value receive_weights(const Napi::CallbackInfo& info);

  friend class ReceiveWeightsWorker;
  // Swaps in weights received over a link; refused once the engine is closed.
  int64_t swap_received(std::shared_ptr<const model::Qwen3Weights> weights) {
    if (tsfn_released_) throw std::runtime_error("the engine was closed while the weights were on their way");
    return engine_->swap_weights(std::move(weights));
  }

  // Refuses weights whose model differs in shape from the engine's, naming both shapes.
  void require_engine_shape(const model::Qwen3Config& incoming, const std::string& source) const {
    const std::string want = model::qwen3_shape_text(engine_->config()), got = model::qwen3_shape_text(incoming);
    if (got != want) throw std::invalid_argument(source + " has shape " + got + ", the engine's model " + want);
  }

  Napi::Value stats(const Napi::CallbackInfo& info) {
    const engine::EngineStats s = engine_->stats();
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("vocabSize", double(engine_->config().vocab_size));
    o.Set("maxSequences", double(s.max_sequences));
    o.Set("maxBatchTokens", double(s.max_batch_tokens));
    o.Set("maxContext", double(s.max_context));
    o.Set("blockSize", double(s.block_size));
    o.Set("running", double(s.running));
    o.Set("waiting", double(s.waiting));
    o.Set("idle", double(s.idle));
    o.Set("openSequences", double(s.open_sequences));
    o.Set("preemptions", double(s.preemptions));
    o.Set("kvBlocksUsed", double(s.kv_blocks_used));
    o.Set("kvBlocksTotal", double(s.kv_blocks_total));
    o.Set("kvCacheDtype", model::kv_dtype_name(s.kv_dtype));
    o.Set("kvBytesPerBlock", double(model::KvCache::bytes_per_block(engine_->config(), s.block_size, s.kv_dtype)));
    o.Set("steps", double(s.steps));
    o.Set("generatedTokens", double(s.generated_tokens));
    o.Set("processedTokens", double(s.processed_tokens));
    o.Set("prefixCacheHitTokens", double(s.prefix_hit_tokens));
    o.Set("busySeconds", s.busy_seconds);
    o.Set("tokensPerSecond", s.busy_seconds > 0 ? double(s.generated_tokens) / s.busy_seconds : 0.0);
    o.Set("policyVersion", double(s.policy_version));
    o.Set("turns", double(s.turns));
    o.Set("heldSeconds", s.held_seconds);
    o.Set("device", model::device_name(engine_->device()));
    o.Set("runner", runner_description_object(info.Env(), engine_->description()));
    return o;
  }

  // proceed(turn): lockstep mode; every turn up to `turn` has been handled and its follow-ups queued.
  Napi::Value proceed(const Napi::CallbackInfo& info) {
    engine_->proceed(id_argument(info, 0, "proceed(turn): turn"));
    return info.Env().Undefined();
  }

  Napi::Value close(const Napi::CallbackInfo& info) {
    shut_down();
    return info.Env().Undefined();
  }

  std::unique_ptr<engine::Engine> engine_;
  Napi::ThreadSafeFunction tsfn_;
  bool tsfn_released_ = false;
  std::unordered_map<uint64_t, Napi::Promise::Deferred> pending_;
  Napi::FunctionReference on_turn_;
};

class ReceiveWeightsWorker : public Napi::AsyncWorker {
 public:
  ReceiveWeightsWorker(Napi::Env env, Napi::Object engine, Engine* owner, const model::Qwen3Config& config, CollectiveLease lease)
      : Napi::AsyncWorker(env), engine_(Napi::Persistent(engine)), owner_(owner), config_(config), lease_(std::move(lease)),
        deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      model::ReceivedWeights received = model::receive_weights(*lease_.collective, config_);
      weights_ = std::move(received.weights);
      transfer_ = received.transfer;
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    lease_.release();
    Napi::Env env = Env();
    try {
      const int64_t version = owner_->swap_received(std::move(weights_));
      Napi::Object o = Napi::Object::New(env);
      o.Set("weightsVersion", double(version));
      o.Set("bytes", double(transfer_.bytes));
      o.Set("seconds", transfer_.seconds);
      deferred_.Resolve(o);
    } catch (const std::exception& e) {
      deferred_.Reject(Napi::Error::New(env, e.what()).Value());
    }
  }
  void OnError(const Napi::Error& e) override {
    lease_.release();
    deferred_.Reject(e.Value());
  }

 private:
  Napi::ObjectReference engine_;  // keeps the engine alive while the weights are on their way
  Engine* owner_;
  model::Qwen3Config config_;
  CollectiveLease lease_;
  model::WeightTransfer transfer_;
  std::shared_ptr<const model::Qwen3Weights> weights_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value Engine::receive_weights(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (tsfn_released_) throw Napi::Error::New(env, "receiveWeights: the engine is closed");
  CollectiveLease lease = lease_connected_collective(env, info.Length() > 0 ? info[0] : env.Undefined(), "receiveWeights(collective)");
  if (lease.collective->rank() == 0) {
    lease.release();
    throw Napi::Error::New(env, "receiveWeights(collective): rank 0 of a weight link is the sender");
  }
  auto* worker = new ReceiveWeightsWorker(env, info.This().As<Napi::Object>(), this, engine_->config(), std::move(lease));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// sampleLogits(logits: Float32Array [V], temperature, seed, tokenIndex, numDraws) → {tokens, logprobs}:
// exactly what the engine draws at that token index (draw 0 the sample, then the extra draws).
Napi::Value sample_logits(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    throw Napi::TypeError::New(env, "sampleLogits(logits, temperature, seed, tokenIndex, numDraws): logits must be a Float32Array");
  }
  const Napi::Float32Array logits = info[0].As<Napi::Float32Array>();
  const float temperature = info[1].As<Napi::Number>().FloatValue();
  const uint64_t seed = seed_argument(env, info[2]);
  const uint64_t token_index = uint64_t(info[3].As<Napi::Number>().Int64Value());
  const int64_t num_draws = info[4].As<Napi::Number>().Int64Value();
  if (num_draws < 1 || num_draws > 1 + engine::kMaxExtraDraws) throw Napi::RangeError::New(env, "sampleLogits: numDraws out of range");
  std::vector<cpu::TokenDraw> draws(static_cast<size_t>(num_draws));
  guarded(env, [&] {
    cpu::sample_forward(draws.data(), num_draws, logits.Data(), int64_t(logits.ElementLength()), temperature, seed, token_index);
    return 0;
  });
  Napi::Int32Array tokens = Napi::Int32Array::New(env, draws.size());
  Napi::Float32Array logprobs = Napi::Float32Array::New(env, draws.size());
  for (size_t i = 0; i < draws.size(); i++) {
    tokens[i] = draws[i].token;
    logprobs[i] = draws[i].logprob;
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("tokens", tokens);
  o.Set("logprobs", logprobs);
  return o;
}

}  // namespace

void register_engine(Napi::Env env, Napi::Object exports) {
  exports.Set("Engine", Engine::define(env));
  exports.Set("sampleLogits", Napi::Function::New(env, sample_logits, "sampleLogits"));
}

}  // namespace s3::napi
