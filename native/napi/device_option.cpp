// Reading the device and weight-format options; see device_option.h.
#include "napi/device_option.h"

#include <optional>
#include <string>

#include "model/kv_cache.h"
#include "napi/guarded.h"

namespace s3::napi {

model::Device device_option(Napi::Env env, Napi::Object options, const char* what) {
  const Napi::Value v = options.Get("device");
  model::DeviceChoice choice = model::DeviceChoice::Auto;
  if (!v.IsUndefined()) {
    const std::optional<model::DeviceChoice> parsed =
        v.IsString() ? model::parse_device_choice(v.As<Napi::String>().Utf8Value()) : std::nullopt;
    if (!parsed) {
      throw Napi::TypeError::New(env, std::string(what) + ": device must be 'cpu', 'cuda' or 'auto', got " +
                                          (v.IsString() ? "'" + v.As<Napi::String>().Utf8Value() + "'" : std::string("a non-string value")));
    }
    choice = *parsed;
  }
  return guarded(env, [&] { return model::resolve_device(choice); });
}

engine::WeightFormat weight_format_option(Napi::Env env, Napi::Object options, const char* what) {
  const Napi::Value v = options.Get("weights");
  if (v.IsUndefined()) return engine::WeightFormat::Stored;
  const std::string text = v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
  if (text == "stored") return engine::WeightFormat::Stored;
  if (text == "bf16") return engine::WeightFormat::Bf16;
  if (text == "fp8") return engine::WeightFormat::Fp8;
  throw Napi::TypeError::New(env, std::string(what) + ": weights must be 'stored', 'bf16' or 'fp8', got " +
                                      (v.IsString() ? "'" + text + "'" : std::string("a non-string value")));
}

KvDtype kv_dtype_option(Napi::Env env, Napi::Object options, const char* what, KvDtype fallback) {
  const Napi::Value v = options.Get("kvCacheDtype");
  if (v.IsUndefined()) return fallback;
  const std::string text = v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
  const std::optional<KvDtype> dtype = v.IsString() ? model::parse_kv_dtype(text) : std::nullopt;
  if (!dtype) {
    throw Napi::TypeError::New(env, std::string(what) + " kvCacheDtype must be 'f32', 'bf16' or 'fp8', got " +
                                        (v.IsString() ? "'" + text + "'" : std::string("a non-string value")));
  }
  return *dtype;
}

Napi::Object runner_description_object(Napi::Env env, const engine::RunnerDescription& description) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("device", description.device);
  o.Set("gemm", description.gemm);
  o.Set("attention", description.attention);
  o.Set("graphs", description.graphs);
  return o;
}

}  // namespace s3::napi
