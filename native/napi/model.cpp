// N-API bindings of native/model; see model.h. Native exceptions become JS errors with the same
// message (node-addon-api's C++ exception support).
#include "napi/model.h"

#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "cpu/machine_limits.h"
#include "model/forward_bench.h"
#include "model/kv_cache.h"
#include "model/qwen3_forward.h"
#include "model/qwen3_init.h"
#include "model/qwen3_weights.h"
#include "napi/guarded.h"

namespace s3::napi {
namespace {

Napi::Object config_object(Napi::Env env, const model::Qwen3Config& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("hiddenSize", double(c.hidden_size));
  o.Set("numHiddenLayers", double(c.num_hidden_layers));
  o.Set("numAttentionHeads", double(c.num_attention_heads));
  o.Set("numKeyValueHeads", double(c.num_key_value_heads));
  o.Set("headDim", double(c.head_dim));
  o.Set("intermediateSize", double(c.intermediate_size));
  o.Set("vocabSize", double(c.vocab_size));
  o.Set("maxPositionEmbeddings", double(c.max_position_embeddings));
  o.Set("ropeTheta", double(c.rope_theta));
  o.Set("rmsNormEps", double(c.rms_norm_eps));
  o.Set("tieWordEmbeddings", c.tie_word_embeddings);
  o.Set("torchDtype", c.torch_dtype);
  o.Set("fp8Blockwise", c.fp8_blockwise);
  return o;
}

class Model : public Napi::ObjectWrap<Model> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Model", {InstanceMethod("config", &Model::config), InstanceMethod("logits", &Model::logits)});
  }

  explicit Model(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Model>(info) {
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "new Model(directory): directory must be a string");
    const std::string directory = info[0].As<Napi::String>();
    weights_ = guarded(info.Env(), [&] { return std::make_unique<model::Qwen3Weights>(model::Qwen3Weights::load(directory)); });
  }

  const model::Qwen3Weights& weights() const { return *weights_; }

 private:
  Napi::Value config(const Napi::CallbackInfo& info) { return config_object(info.Env(), weights_->config()); }

  // logits(ids: Int32Array, startPos = 0): Float32Array [T × V], the logits of every position of
  // one sequence whose token t sits at rotary position startPos + t. Synchronous.
  Napi::Value logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
      throw Napi::TypeError::New(env, "logits(ids, startPos): ids must be an Int32Array");
    }
    const Napi::Int32Array ids = info[0].As<Napi::Int32Array>();
    const int64_t start_pos = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int64Value() : 0;
    const model::Qwen3Config& c = weights_->config();
    const int64_t T = int64_t(ids.ElementLength());
    if (T == 0) throw Napi::RangeError::New(env, "logits: ids is empty");
    Napi::Float32Array out = Napi::Float32Array::New(env, size_t(T * c.vocab_size));
    guarded(env, [&] {
      const int64_t block_size = (T + 15) / 16 * 16;
      model::KvCache cache(c, block_size, 1);
      const int32_t table[] = {0};
      const cpu::AttentionSequence seq{0, T, table, 1};
      std::vector<int64_t> rows(static_cast<size_t>(T));
      std::iota(rows.begin(), rows.end(), 0);
      model::Qwen3Workspace workspace;
      const model::Qwen3Batch batch{ids.Data(), &seq, 1, rows.data(), T, &start_pos};
      model::qwen3_forward(*weights_, batch, cache, workspace, out.Data(), default_thread_pool());
      return 0;
    });
    return out;
  }

  std::unique_ptr<model::Qwen3Weights> weights_;
};

DType parse_init_dtype(Napi::Env env, const std::string& name) {
  if (name == "f32") return DType::F32;
  if (name == "bf16") return DType::BF16;
  if (name == "f16") return DType::F16;
  throw Napi::TypeError::New(env, "initCheckpoint: dtype must be f32, bf16 or f16, got \"" + name + "\"");
}

// initCheckpoint({directory, seed: bigint, dtype}) → number of parameters.
Napi::Value init_checkpoint(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Napi::Object options = info[0].As<Napi::Object>();
  model::Qwen3InitOptions init;
  init.directory = options.Get("directory").As<Napi::String>();
  bool lossless = true;
  init.seed = options.Get("seed").As<Napi::BigInt>().Uint64Value(&lossless);
  init.dtype = parse_init_dtype(env, options.Get("dtype").As<Napi::String>());
  return Napi::Number::New(env, double(guarded(env, [&] { return model::init_qwen3_checkpoint(init); })));
}

Napi::Object figures_object(Napi::Env env, const model::BenchFigures& f) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("sequences", double(f.sequences));
  o.Set("tokensPerStep", double(f.tokens_per_step));
  o.Set("bestSeconds", f.best_seconds);
  o.Set("medianSeconds", f.median_seconds);
  o.Set("tokensPerSecond", f.tokens_per_second);
  o.Set("gflops", f.gflops);
  o.Set("weightGBytesPerSecond", f.weight_gbytes_per_second);
  o.Set("kvGBytes", f.kv_gbytes);
  return o;
}

// benchForward(model, {sequences, tokens, repetitions}) / benchDecode(model, {sequences, context, repetitions,
// kvCacheDtype?: "f32" | "bf16" | "fp8"}).
Napi::Value bench(const Napi::CallbackInfo& info, bool decode) {
  Napi::Env env = info.Env();
  const model::Qwen3Weights& weights = Model::Unwrap(info[0].As<Napi::Object>())->weights();
  const Napi::Object options = info[1].As<Napi::Object>();
  const int64_t sequences = options.Get("sequences").As<Napi::Number>().Int64Value();
  const int64_t length = options.Get(decode ? "context" : "tokens").As<Napi::Number>().Int64Value();
  const int repetitions = options.Get("repetitions").As<Napi::Number>().Int32Value();
  cpu::KvDtype kv_dtype = cpu::KvDtype::F32;
  if (decode && options.Has("kvCacheDtype") && !options.Get("kvCacheDtype").IsUndefined()) {
    const std::string name = options.Get("kvCacheDtype").ToString().Utf8Value();
    const std::optional<cpu::KvDtype> parsed = model::parse_kv_dtype(name);
    if (!parsed) {
      Napi::TypeError::New(env, "benchDecode: kvCacheDtype must be \"f32\", \"bf16\" or \"fp8\", got \"" + name + "\"")
          .ThrowAsJavaScriptException();
      return env.Undefined();
    }
    kv_dtype = *parsed;
  }
  return figures_object(env, guarded(env, [&] {
    return decode ? model::bench_decode(weights, sequences, length, repetitions, default_thread_pool(), kv_dtype)
                  : model::bench_prefill(weights, sequences, length, repetitions, default_thread_pool());
  }));
}

Napi::Value machine_limits(const Napi::CallbackInfo& info) {
  const cpu::MachineLimits limits = cpu::measure_machine_limits(default_thread_pool());
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("fmaGflops", limits.fma_gflops);
  o.Set("readGBytesPerSecond", limits.read_gbytes_per_s);
  o.Set("simd", limits.simd);
  o.Set("threads", double(default_thread_pool().num_threads()));
  return o;
}

}  // namespace

void register_model(Napi::Env env, Napi::Object exports) {
  exports.Set("Model", Model::define(env));
  exports.Set("initCheckpoint", Napi::Function::New(env, init_checkpoint, "initCheckpoint"));
  exports.Set("benchForward", Napi::Function::New(env, [](const Napi::CallbackInfo& info) { return bench(info, false); }, "benchForward"));
  exports.Set("benchDecode", Napi::Function::New(env, [](const Napi::CallbackInfo& info) { return bench(info, true); }, "benchDecode"));
  exports.Set("machineLimits", Napi::Function::New(env, machine_limits, "machineLimits"));
}

}  // namespace s3::napi
