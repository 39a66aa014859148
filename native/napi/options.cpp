// Reading JS options objects; see options.h.
#include "napi/options.h"

#include <cmath>

namespace s3::napi {
namespace {

const char* type_name(const Napi::Value& v) {
  if (v.IsUndefined()) return "nothing";
  if (v.IsNull()) return "null";
  if (v.IsBoolean()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsBigInt()) return "a bigint";
  if (v.IsFunction()) return "a function";
  if (v.IsArray()) return "an array";
  return "an object";
}

}  // namespace

Options::Options(Napi::Env env, Napi::Value value, std::string what) : env_(env), what_(std::move(what)) {
  if (value.IsUndefined()) {
    object_ = Napi::Object::New(env);
    return;
  }
  if (!value.IsObject()) throw Napi::TypeError::New(env, what_ + " must be an object, got " + type_name(value));
  object_ = value.As<Napi::Object>();
}

void Options::fail(const char* key, const char* expected, const Napi::Value& got) const {
  throw Napi::TypeError::New(env_, what_ + ": " + key + " must be " + expected + ", got " + type_name(got));
}

double Options::number(const char* key, double fallback) const {
  const Napi::Value v = object_.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsNumber()) fail(key, "a number", v);
  return v.As<Napi::Number>().DoubleValue();
}

int64_t Options::integer(const char* key, int64_t fallback) const {
  const Napi::Value v = object_.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsNumber()) fail(key, "an integer", v);
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 9007199254740991.0) {
    throw Napi::TypeError::New(env_, what_ + ": " + key + " must be an integer, got " + std::to_string(d));
  }
  return int64_t(d);
}

bool Options::boolean(const char* key, bool fallback) const {
  const Napi::Value v = object_.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsBoolean()) fail(key, "a boolean", v);
  return v.As<Napi::Boolean>().Value();
}

double Options::required_number(const char* key) const {
  if (object_.Get(key).IsUndefined()) fail(key, "a number", object_.Get(key));
  return number(key, 0.0);
}

int64_t Options::required_integer(const char* key) const {
  if (object_.Get(key).IsUndefined()) fail(key, "an integer", object_.Get(key));
  return integer(key, 0);
}

bool Options::required_boolean(const char* key) const {
  if (object_.Get(key).IsUndefined()) fail(key, "a boolean", object_.Get(key));
  return boolean(key, false);
}

std::string Options::required_string(const char* key) const {
  const Napi::Value v = object_.Get(key);
  if (!v.IsString()) fail(key, "a string", v);
  return v.As<Napi::String>().Utf8Value();
}

}  // namespace s3::napi
