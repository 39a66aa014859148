// N-API bindings of native/model; see model.h. Native exceptions become JS errors with the same
// message (node-addon-api's C++ exception support).
#include "napi/model.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "bench/machine_limits.h"
#include "bench/forward_bench.h"
#include "model/kv_cache.h"
#include "model/qwen3_init.h"
#include "model/qwen3_weights.h"
#include "engine/model_runner.h"
#include "bench/runner_bench.h"
#include "napi/device_option.h"
#include "napi/guarded.h"
#include "napi/options.h"
#ifdef S3_WITH_CUDA
#include "cuda/device_memory.h"
#endif

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
    weights_ = guarded(info.Env(), [&] { return std::make_shared<const model::Qwen3Weights>(model::Qwen3Weights::load(directory)); });
  }

  const model::Qwen3Weights& weights() const { return *weights_; }
  const std::shared_ptr<const model::Qwen3Weights>& shared_weights() const { return weights_; }

 private:
  Napi::Value config(const Napi::CallbackInfo& info) { return config_object(info.Env(), weights_->config()); }

  // logits(ids: Int32Array, startPos = 0, {device, weights}?): Float32Array [T × V], the logits of
  // every position of one sequence whose token t sits at rotary position startPos + t, computed by
  // the runner of that device (kept for the next call with the same options). Synchronous.
  Napi::Value logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
      throw Napi::TypeError::New(env, "logits(ids, startPos, options): ids must be an Int32Array");
    }
    const Napi::Int32Array ids = info[0].As<Napi::Int32Array>();
    const int64_t start_pos = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int64Value() : 0;
    const Napi::Object options = info.Length() > 2 && info[2].IsObject() ? info[2].As<Napi::Object>() : Napi::Object::New(env);
    engine::RunnerOptions runner;
    runner.device = device_option(env, options, "logits");
    runner.weight_format = weight_format_option(env, options, "logits");
    const model::Qwen3Config& c = weights_->config();
    const int64_t T = int64_t(ids.ElementLength());
    if (T == 0) throw Napi::RangeError::New(env, "logits: ids is empty");
    runner.max_context = T;
    Napi::Float32Array out = Napi::Float32Array::New(env, size_t(T * c.vocab_size));
    guarded(env, [&] {
      if (runner_ == nullptr || runner_device_ != runner.device || runner_format_ != runner.weight_format) {
        runner_.reset();
        runner_ = engine::make_model_runner(runner, weights_, default_thread_pool());
        runner_device_ = runner.device;
        runner_format_ = runner.weight_format;
      }
      runner_->logits(ids.Data(), T, start_pos, out.Data());
      return 0;
    });
    return out;
  }

  // The runner the last logits call used, and what it was made for.
  std::unique_ptr<engine::ModelRunner> runner_;
  model::Device runner_device_ = model::Device::Cpu;
  engine::WeightFormat runner_format_ = engine::WeightFormat::Stored;
  std::shared_ptr<const model::Qwen3Weights> weights_;
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
  const Options options(env, info[0], "initCheckpoint");
  model::Qwen3InitOptions init;
  init.directory = options.required_string("directory");
  if (!options.get("seed").IsBigInt()) throw Napi::TypeError::New(env, "initCheckpoint: seed must be a bigint");
  bool lossless = true;
  init.seed = options.get("seed").As<Napi::BigInt>().Uint64Value(&lossless);
  init.dtype = parse_init_dtype(env, options.required_string("dtype"));
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

// benchForward(model, {sequences, tokens, repetitions, kvCacheDtype?}) / benchDecode(model, {sequences, context,
// repetitions, kvCacheDtype?}); kvCacheDtype: "f32" (default) | "bf16" | "fp8".
Napi::Value bench(const Napi::CallbackInfo& info, bool decode) {
  Napi::Env env = info.Env();
  const model::Qwen3Weights& weights = Model::Unwrap(info[0].As<Napi::Object>())->weights();
  const Options options(env, info[1], decode ? "benchDecode" : "benchForward");
  const int64_t sequences = options.required_integer("sequences");
  const int64_t length = options.required_integer(decode ? "context" : "tokens");
  const int repetitions = int(options.required_integer("repetitions"));
  const KvDtype kv_dtype = kv_dtype_option(env, options.object(), decode ? "benchDecode:" : "benchForward:", KvDtype::F32);
  return figures_object(env, guarded(env, [&] {
    return decode ? model::bench_decode(weights, sequences, length, repetitions, default_thread_pool(), kv_dtype)
                  : model::bench_prefill(weights, sequences, length, repetitions, default_thread_pool(), kv_dtype);
  }));
}

Napi::Object runner_figures_object(Napi::Env env, const engine::RunnerBenchFigures& f) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("sequences", double(f.sequences));
  o.Set("tokens", double(f.tokens));
  o.Set("medianSeconds", f.median_seconds);
  o.Set("bestSeconds", f.best_seconds);
  o.Set("tokensPerSecond", f.tokens_per_second);
  o.Set("bytesPerStep", f.bytes_per_step);
  o.Set("flops", f.flops);
  o.Set("peakProduct", f.peak_product.empty() ? env.Null() : Napi::String::New(env, f.peak_product));
  o.Set("peakBf16Tflops", f.peak_tflops > 0 ? Napi::Number::New(env, f.peak_tflops) : env.Null());
  o.Set("mfu", f.mfu >= 0 ? Napi::Number::New(env, f.mfu) : env.Null());
  o.Set("runner", runner_description_object(env, f.runner));
  return o;
}

// benchRunnerDecode(model, {device, weights, kvCacheDtype, sequences, context, repetitions}) /
// benchRunnerPrefill(model, {device, weights, sequences, tokens, stepTokens, repetitions}): the timed
// runner steps of bench/runner_bench.h on the chosen device.
Napi::Value bench_runner(const Napi::CallbackInfo& info, bool decode) {
  Napi::Env env = info.Env();
  const Model* model = Model::Unwrap(info[0].As<Napi::Object>());
  const Options options(env, info[1], decode ? "benchRunnerDecode" : "benchRunnerPrefill");
  engine::RunnerOptions runner;
  runner.device = device_option(env, options.object(), options.what().c_str());
  runner.weight_format = weight_format_option(env, options.object(), "bench");
  runner.kv_dtype = kv_dtype_option(env, options.object(), "benchRunnerDecode:", runner.kv_dtype);
  const int64_t sequences = options.required_integer("sequences");
  const int repetitions = int(options.required_integer("repetitions"));
  const int64_t context = decode ? options.required_integer("context") : 0;
  const int64_t tokens = decode ? 0 : options.required_integer("tokens");
  const int64_t step_tokens = decode ? 0 : options.required_integer("stepTokens");
  return runner_figures_object(env, guarded(env, [&] {
    if (decode) return engine::bench_runner_decode(model->shared_weights(), runner, sequences, context, repetitions, default_thread_pool());
    return engine::bench_runner_prefill(model->shared_weights(), runner, sequences, tokens, step_tokens, repetitions, default_thread_pool());
  }));
}

// deviceCopyBandwidth() → bytes/s read plus written by a device-to-device copy on CUDA device 0.
Napi::Value device_copy_bandwidth(const Napi::CallbackInfo& info) {
#ifdef S3_WITH_CUDA
  return Napi::Number::New(info.Env(), guarded(info.Env(), [] { return cuda::copy_bandwidth(); }));
#else
  throw Napi::Error::New(info.Env(), "deviceCopyBandwidth: this addon was built without CUDA");
#endif
}

Napi::Value machine_limits(const Napi::CallbackInfo& info) {
  const bench::MachineLimits limits = bench::measure_machine_limits(default_thread_pool());
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("fmaGflops", limits.fma_gflops);
  o.Set("bf16DotGflops", limits.bf16_dot_gflops);
  o.Set("amxGflops", limits.amx_gflops);
  o.Set("amxLoadedGflops", limits.amx_loaded_gflops);
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
  exports.Set("benchRunnerDecode", Napi::Function::New(env, [](const Napi::CallbackInfo& info) { return bench_runner(info, true); }, "benchRunnerDecode"));
  exports.Set("benchRunnerPrefill", Napi::Function::New(env, [](const Napi::CallbackInfo& info) { return bench_runner(info, false); }, "benchRunnerPrefill"));
  exports.Set("deviceCopyBandwidth", Napi::Function::New(env, device_copy_bandwidth, "deviceCopyBandwidth"));
}

}  // namespace s3::napi
