// N-API binding of native/bench/train_bench; see train_bench.h. Runs on the calling thread (the
// bench command has nothing else to do meanwhile).
#include "napi/train_bench.h"

#include <string>

#include "bench/train_bench.h"
#include "napi/device_option.h"
#include "napi/guarded.h"
#include "napi/options.h"

namespace s3::napi {
namespace {

// benchTrain(directory, {tokens, repetitions, warmUp, sequences?, microBatches?, device?, optimizerStateDtype?,
// matmulPrecision?, activationBytes?})
// → figures (see src/bench/train-bench.ts).
Napi::Value bench_train(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "benchTrain(directory, options): directory must be a string");
  const std::string directory = info[0].As<Napi::String>();
  const Options options(env, info.Length() > 1 ? info[1] : env.Undefined(), "benchTrain");
  model::TrainBenchOptions bench;
  bench.tokens = options.required_integer("tokens");
  bench.repetitions = int(options.required_integer("repetitions"));
  bench.warm_up = options.required_boolean("warmUp");
  bench.sequences = options.integer("sequences", 1);
  bench.micro_batches = options.integer("microBatches", 1);
  bench.device = device_option(env, options.object(), "benchTrain");
  const int64_t activation_bytes = options.integer("activationBytes", 0);
  if (activation_bytes < 0) throw Napi::TypeError::New(env, "benchTrain: activationBytes must be ≥ 0");
  bench.activation_bytes = size_t(activation_bytes);
  const Napi::Value state_value = options.get("optimizerStateDtype");
  const std::string state_name = state_value.IsUndefined() ? "f32" : state_value.ToString().Utf8Value();
  const auto optimizer_state = train::parse_optimizer_state_dtype(state_name);
  if (!optimizer_state) {
    throw Napi::TypeError::New(env, "benchTrain: optimizerStateDtype must be 'f32' or 'bf16', got " + state_name);
  }
  const Napi::Value precision_value = options.get("matmulPrecision");
  const std::string precision_name = precision_value.IsUndefined() ? "f32" : precision_value.ToString().Utf8Value();
  MatmulPrecision precision = MatmulPrecision::F32;
  if (!parse_matmul_precision(precision_name.c_str(), &precision)) {
    throw Napi::TypeError::New(env, "benchTrain: matmulPrecision must be 'f32' or 'bf16', got " + precision_name);
  }
  bench.optimizer_state = *optimizer_state;
  bench.matmul_precision = precision;
  const model::TrainBenchFigures f = guarded(env, [&] { return model::bench_train(directory, bench); });
  Napi::Object o = Napi::Object::New(env);
  o.Set("tokens", double(f.tokens));
  o.Set("sequences", double(f.sequences));
  o.Set("microBatches", double(f.micro_batches));
  o.Set("device", f.device);
  o.Set("bestSeconds", f.best_seconds);
  o.Set("medianSeconds", f.median_seconds);
  o.Set("forwardBackwardSeconds", f.forward_backward_seconds);
  o.Set("optimizerSeconds", f.optimizer_seconds);
  o.Set("tokensPerSecond", f.tokens_per_second);
  o.Set("flopsPerToken", f.flops_per_token);
  o.Set("gflops", f.gflops);
  o.Set("peakRssBytes", f.peak_rss_bytes);
  o.Set("loss", f.loss);
  o.Set("activationsKept", f.activations_kept);
  // The GPU's datasheet peak and the MFU against it (bench/device_peaks.h); null where there is none.
  o.Set("peakProduct", f.peak_product.empty() ? env.Null() : Napi::String::New(env, f.peak_product));
  o.Set("peakBf16Tflops", f.peak_tflops > 0 ? Napi::Number::New(env, f.peak_tflops) : env.Null());
  o.Set("mfu", f.mfu >= 0 ? Napi::Number::New(env, f.mfu) : env.Null());
  return o;
}

}  // namespace

void register_train_bench(Napi::Env env, Napi::Object exports) {
  exports.Set("benchTrain", Napi::Function::New(env, bench_train, "benchTrain"));
}

}  // namespace s3::napi
