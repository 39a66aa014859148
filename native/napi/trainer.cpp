// N-API bindings of native/train/trainer.h. accumulate runs on the libuv pool (Napi::AsyncWorker)
// and resolves a promise; while it runs every other method throws (one operation at a time).
// Native exceptions become JS errors with the same message.
#include "napi/trainer.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "napi/collective.h"
#include "napi/device_option.h"
#include "napi/guarded.h"
#include "napi/options.h"
#include "napi/trainer_handle.h"
#include "train/trainer.h"

namespace s3::napi {
namespace {

// Marks the JS objects of the Trainer class, so unwrap_idle_trainer can refuse any other object.
constexpr napi_type_tag kTrainerTypeTag = {0x8f3c2a7d51e94b06ULL, 0xb2d4e6f8091a3c5eULL};

train::TrainerOptions parse_options(Napi::Env env, const Napi::Value& value) {
  train::TrainerOptions o;
  const Options options(env, value, "Trainer options");
  o.adamw.lr = options.number("lr", o.adamw.lr);
  o.adamw.beta1 = options.number("beta1", o.adamw.beta1);
  o.adamw.beta2 = options.number("beta2", o.adamw.beta2);
  o.adamw.eps = options.number("eps", o.adamw.eps);
  o.adamw.weight_decay = options.number("weightDecay", o.adamw.weight_decay);
  o.adamw.max_grad_norm = options.number("maxGradNorm", o.adamw.max_grad_norm);
  o.adamw.warmup_steps = options.integer("warmupSteps", o.adamw.warmup_steps);
  o.icepop_low = options.number("icepopLow", o.icepop_low);
  o.icepop_high = options.number("icepopHigh", o.icepop_high);
  o.threads = size_t(options.integer("threads", 0));
  o.device = device_option(env, options.object(), "Trainer options");
  const int64_t activation_bytes = options.integer("activationBytes", 0);
  if (activation_bytes < 0) throw Napi::TypeError::New(env, "Trainer options: activationBytes must be ≥ 0");
  o.activation_bytes = size_t(activation_bytes);
  o.shared_prefix_min_tokens = options.integer("sharedPrefixMinTokens", o.shared_prefix_min_tokens);
  o.restore_optimizer = !options.boolean("freshOptimizer", !o.restore_optimizer);
  const Napi::Value state_value = options.get("optimizerStateDtype");
  if (!state_value.IsUndefined()) {
    const std::string state_name = state_value.ToString().Utf8Value();
    const auto state_dtype = train::parse_optimizer_state_dtype(state_value.IsString() ? state_name : "");
    if (!state_dtype) {
      throw Napi::TypeError::New(env, "Trainer options: optimizerStateDtype must be 'f32' or 'bf16', got " + state_name);
    }
    o.adamw.state_dtype = *state_dtype;
  }
  const Napi::Value precision_value = options.get("matmulPrecision");
  if (!precision_value.IsUndefined()) {
    const std::string precision_name = precision_value.ToString().Utf8Value();
    if (!precision_value.IsString() || !parse_matmul_precision(precision_name.c_str(), &o.matmul_precision)) {
      throw Napi::TypeError::New(env, "Trainer options: matmulPrecision must be 'f32' or 'bf16', got " + precision_name);
    }
  }
  return o;
}

template <typename Array, typename T>
std::vector<T> typed_vector(Napi::Env env, const Napi::Object& batch, const char* key, napi_typedarray_type type,
                            bool required) {
  const Napi::Value v = batch.Get(key);
  if (v.IsUndefined() && !required) return {};
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) {
    throw Napi::TypeError::New(env, std::string("accumulate: batch.") + key + " must be a " +
                                        (type == napi_int32_array ? "Int32Array" : "Float32Array"));
  }
  const Array a = v.As<Array>();
  return std::vector<T>(a.Data(), a.Data() + a.ElementLength());
}

Napi::Object tensor_list(Napi::Env env, const train::Trainer& t, const std::vector<float>& values) {
  Napi::Array out = Napi::Array::New(env, t.layout().entries.size());
  uint32_t i = 0;
  for (const auto& e : t.layout().entries) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", e.name);
    Napi::Array shape = Napi::Array::New(env, e.shape.size());
    for (uint32_t d = 0; d < e.shape.size(); d++) shape.Set(d, double(e.shape[d]));
    o.Set("shape", shape);
    Napi::Float32Array data = Napi::Float32Array::New(env, e.count);
    std::copy(values.begin() + std::ptrdiff_t(e.offset), values.begin() + std::ptrdiff_t(e.offset + e.count), data.Data());
    o.Set("data", data);
    out.Set(i++, o);
  }
  return out;
}

class AccumulateWorker : public Napi::AsyncWorker {
 public:
  AccumulateWorker(Napi::Env env, std::shared_ptr<train::Trainer> trainer, std::shared_ptr<std::atomic<bool>> busy,
                   train::TrainBatch batch, std::optional<CollectiveLease> sum_over)
      : Napi::AsyncWorker(env), trainer_(std::move(trainer)), busy_(std::move(busy)), batch_(std::move(batch)),
        sum_over_(std::move(sum_over)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      result_ = sum_over_ ? trainer_->accumulate_and_sum(batch_, *sum_over_->collective) : trainer_->accumulate(batch_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    release();
    Napi::Env env = Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("loss", result_.loss);
    o.Set("tokens", double(result_.tokens));
    o.Set("meanRatio", result_.mean_ratio);
    o.Set("fractionMasked", result_.fraction_masked);
    o.Set("meanAbsLogRatio", result_.mean_abs_log_ratio);
    o.Set("meanEntropy", result_.mean_entropy);
    o.Set("meanLogprob", result_.mean_logprob);
    o.Set("centering", result_.centering);
    o.Set("meanDrawWeight", result_.mean_draw_weight);
    o.Set("klMean", result_.kl_mean);
    o.Set("sharedPrefixTokens", double(result_.shared_prefix_tokens));
    const train::RatioQuantiles& q = result_.ratio_quantiles;
    Napi::Object quantiles = Napi::Object::New(env);
    quantiles.Set("min", q.min);
    quantiles.Set("p01", q.p01);
    quantiles.Set("p10", q.p10);
    quantiles.Set("p50", q.p50);
    quantiles.Set("p90", q.p90);
    quantiles.Set("p99", q.p99);
    quantiles.Set("max", q.max);
    o.Set("ratioQuantiles", quantiles);
    deferred_.Resolve(o);
  }
  void OnError(const Napi::Error& e) override {
    release();
    deferred_.Reject(e.Value());
  }

 private:
  void release() {
    *busy_ = false;
    if (sum_over_) sum_over_->release();
  }
  std::shared_ptr<train::Trainer> trainer_;
  std::shared_ptr<std::atomic<bool>> busy_;
  train::TrainBatch batch_;
  std::optional<CollectiveLease> sum_over_;
  train::StepDiagnostics result_;
  Napi::Promise::Deferred deferred_;
};

// allReduceGradients: the collective's sum of the gradients, off the main thread.
class AllReduceWorker : public Napi::AsyncWorker {
 public:
  AllReduceWorker(Napi::Env env, std::shared_ptr<train::Trainer> trainer, std::shared_ptr<std::atomic<bool>> busy,
                  CollectiveLease lease)
      : Napi::AsyncWorker(env), trainer_(std::move(trainer)), busy_(std::move(busy)), lease_(std::move(lease)),
        deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      trainer_->all_reduce_gradients(*lease_.collective);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    finish();
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    finish();
    deferred_.Reject(e.Value());
  }

 private:
  void finish() {
    *busy_ = false;
    lease_.release();
  }
  std::shared_ptr<train::Trainer> trainer_;
  std::shared_ptr<std::atomic<bool>> busy_;
  CollectiveLease lease_;
  Napi::Promise::Deferred deferred_;
};

class Trainer : public Napi::ObjectWrap<Trainer> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Trainer",
                       {InstanceMethod("accumulate", &Trainer::accumulate), InstanceMethod("step", &Trainer::step),
                        InstanceMethod("zeroGrad", &Trainer::zero_grad), InstanceMethod("save", &Trainer::save),
                        InstanceMethod("saveModel", &Trainer::save_model),
                        InstanceMethod("load", &Trainer::load), InstanceMethod("saveGradients", &Trainer::save_gradients),
                        InstanceMethod("stepCount", &Trainer::step_count), InstanceMethod("setLr", &Trainer::set_lr),
                        InstanceMethod("tensors", &Trainer::tensors), InstanceMethod("gradients", &Trainer::gradients),
                        InstanceMethod("device", &Trainer::device),
                        InstanceMethod("allReduceGradients", &Trainer::all_reduce_gradients),
                        InstanceMethod("parameterFingerprint", &Trainer::parameter_fingerprint)});
  }

  explicit Trainer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Trainer>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "new Trainer(directory, options): directory must be a string");
    const std::string directory = info[0].As<Napi::String>();
    const train::TrainerOptions options = parse_options(env, info.Length() > 1 ? info[1] : env.Undefined());
    trainer_ = guarded(env, [&] { return std::make_shared<train::Trainer>(directory, options); });
    info.This().As<Napi::Object>().TypeTag(&kTrainerTypeTag);
  }

  // The trainer, once no accumulate is running on it.
  const train::Trainer& idle_trainer(Napi::Env env) const {
    idle(env);
    return *trainer_;
  }

 private:
  void idle(Napi::Env env) const {
    if (*busy_) throw Napi::Error::New(env, "Trainer: an accumulate or an all-reduce is still running");
  }

  // accumulate({kind: 'sft' | 'pg', tokens: Int32Array, seqLengths?: Int32Array, coef: Float32Array,
  //             oldLogprobs?: Float32Array, numDraws?: number, drawTokens?: Int32Array,
  //             drawLogprobs?: Float32Array, klCoef?: number, refLogprobs?: Float32Array,
  //             klWeight?: Float32Array}, collective?) → Promise<diagnostics>
  Napi::Value accumulate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "accumulate(batch): batch must be an object");
    const Napi::Object b = info[0].As<Napi::Object>();
    train::TrainBatch batch;
    const Napi::Value kind = b.Get("kind");
    const std::string k = kind.IsString() ? std::string(kind.As<Napi::String>()) : std::string("sft");
    if (k == "sft") {
      batch.kind = train::LossKind::Sft;
    } else if (k == "pg") {
      batch.kind = train::LossKind::PolicyGradient;
    } else {
      throw Napi::TypeError::New(env, "accumulate: batch.kind must be 'sft' or 'pg'");
    }
    batch.tokens = typed_vector<Napi::Int32Array, int32_t>(env, b, "tokens", napi_int32_array, true);
    const std::vector<int32_t> lengths = typed_vector<Napi::Int32Array, int32_t>(env, b, "seqLengths", napi_int32_array, false);
    batch.seq_lengths.assign(lengths.begin(), lengths.end());
    batch.coef = typed_vector<Napi::Float32Array, float>(env, b, "coef", napi_float32_array, true);
    batch.old_logprobs = typed_vector<Napi::Float32Array, float>(env, b, "oldLogprobs", napi_float32_array,
                                                                 batch.kind == train::LossKind::PolicyGradient);
    const Napi::Value draws = b.Get("numDraws");
    if (!draws.IsUndefined()) {
      if (!draws.IsNumber()) throw Napi::TypeError::New(env, "accumulate: batch.numDraws must be a number");
      batch.num_draws = draws.As<Napi::Number>().Int64Value();
      batch.draw_tokens = typed_vector<Napi::Int32Array, int32_t>(env, b, "drawTokens", napi_int32_array, batch.num_draws > 0);
      batch.draw_logprobs = typed_vector<Napi::Float32Array, float>(env, b, "drawLogprobs", napi_float32_array, batch.num_draws > 0);
    }
    const Napi::Value temperature = b.Get("temperature");
    if (!temperature.IsUndefined()) {
      if (!temperature.IsNumber()) throw Napi::TypeError::New(env, "accumulate: batch.temperature must be a number");
      batch.temperature = temperature.As<Napi::Number>().DoubleValue();
    }
    const Napi::Value kl_coef = b.Get("klCoef");
    if (!kl_coef.IsUndefined()) {
      if (!kl_coef.IsNumber()) throw Napi::TypeError::New(env, "accumulate: batch.klCoef must be a number");
      batch.kl_coef = kl_coef.As<Napi::Number>().FloatValue();
    }
    batch.ref_logprobs = typed_vector<Napi::Float32Array, float>(env, b, "refLogprobs", napi_float32_array, batch.kl_coef != 0.0f);
    batch.kl_weight = typed_vector<Napi::Float32Array, float>(env, b, "klWeight", napi_float32_array, batch.kl_coef != 0.0f);
    // A collective as second argument: the rank's last micro-batch of an update, summed as it goes.
    std::optional<CollectiveLease> sum_over;
    if (info.Length() > 1 && !info[1].IsUndefined()) sum_over = lease_connected_collective(env, info[1], "accumulate(batch, collective)");
    *busy_ = true;
    auto* worker = new AccumulateWorker(env, trainer_, busy_, std::move(batch), std::move(sum_over));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  }

  Napi::Value step(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    const train::AdamWStepResult r = guarded(env, [&] { return trainer_->step(); });
    Napi::Object o = Napi::Object::New(env);
    o.Set("gradNorm", r.grad_norm);
    o.Set("lr", r.lr);
    o.Set("step", double(r.step));
    return o;
  }

  // allReduceGradients(collective) → Promise<void>: the gradients summed over the collective's ranks.
  Napi::Value all_reduce_gradients(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    CollectiveLease lease = lease_connected_collective(env, info.Length() > 0 ? info[0] : env.Undefined(), "allReduceGradients(collective)");
    *busy_ = true;
    auto* worker = new AllReduceWorker(env, trainer_, busy_, std::move(lease));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  }

  // parameterFingerprint() → 16 hex digits of a hash of the parameters' bits.
  Napi::Value parameter_fingerprint(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    const uint64_t hash = guarded(env, [&] { return trainer_->parameter_fingerprint(); });
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
    return Napi::String::New(env, text);
  }

  Napi::Value zero_grad(const Napi::CallbackInfo& info) {
    idle(info.Env());
    guarded(info.Env(), [&] { trainer_->zero_grad(); return 0; });
    return info.Env().Undefined();
  }

  Napi::Value save(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "save(directory): directory must be a string");
    const std::string dir = info[0].As<Napi::String>();
    const std::string run_config = info.Length() > 1 && info[1].IsString() ? std::string(info[1].As<Napi::String>()) : std::string();
    guarded(env, [&] { trainer_->save(dir, run_config); return 0; });
    return env.Undefined();
  }

  // saveModel(directory, runConfigJson?): the weights alone (config.json, model.safetensors), for an engine.
  Napi::Value save_model(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "saveModel(directory): directory must be a string");
    const std::string dir = info[0].As<Napi::String>();
    const std::string run_config = info.Length() > 1 && info[1].IsString() ? std::string(info[1].As<Napi::String>()) : std::string();
    guarded(env, [&] { trainer_->save_model(dir, run_config); return 0; });
    return env.Undefined();
  }

  Napi::Value load(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "load(directory): directory must be a string");
    const std::string dir = info[0].As<Napi::String>();
    guarded(env, [&] { trainer_->load(dir); return 0; });
    return env.Undefined();
  }

  Napi::Value save_gradients(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "saveGradients(path): path must be a string");
    const std::string path = info[0].As<Napi::String>();
    guarded(env, [&] { trainer_->save_gradients(path); return 0; });
    return env.Undefined();
  }

  // device() → "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)".
  Napi::Value device(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), trainer_->device_description()); }

  Napi::Value step_count(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), double(trainer_->step_count())); }

  Napi::Value set_lr(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    idle(env);
    if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "setLr(lr): lr must be a number");
    trainer_->set_lr(info[0].As<Napi::Number>().DoubleValue());
    return env.Undefined();
  }

  Napi::Value tensors(const Napi::CallbackInfo& info) {
    idle(info.Env());
    return guarded(info.Env(), [&] { return tensor_list(info.Env(), *trainer_, trainer_->params()); });
  }

  Napi::Value gradients(const Napi::CallbackInfo& info) {
    idle(info.Env());
    return guarded(info.Env(), [&] { return tensor_list(info.Env(), *trainer_, trainer_->grads()); });
  }

  std::shared_ptr<train::Trainer> trainer_;
  std::shared_ptr<std::atomic<bool>> busy_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace

void register_trainer(Napi::Env env, Napi::Object exports) { exports.Set("Trainer", Trainer::define(env)); }

const train::Trainer& unwrap_idle_trainer(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsObject() || !value.As<Napi::Object>().CheckTypeTag(&kTrainerTypeTag)) {
    throw Napi::TypeError::New(env, std::string(what) + " must be a native Trainer");
  }
  return Trainer::Unwrap(value.As<Napi::Object>())->idle_trainer(env);
}

}  // namespace s3::napi
