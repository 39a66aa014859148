// N-API: reading a JS options object one field per line, shared by every binding. A field left out
// keeps the default given; a field of the wrong type throws a TypeError naming the options and the
// field ("Engine options: maxContext must be an integer, got a string"). Required fields have their
// own readers. A new native option then costs its C++ field, one line here, and one TS field.
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>

namespace s3::napi {

class Options {
 public:
  // `value` undefined reads as an empty object; anything else that is not an object is refused.
  Options(Napi::Env env, Napi::Value value, std::string what);

  double number(const char* key, double fallback) const;
  int64_t integer(const char* key, int64_t fallback) const;
  bool boolean(const char* key, bool fallback) const;
  double required_number(const char* key) const;
  int64_t required_integer(const char* key) const;
  bool required_boolean(const char* key) const;
  std::string required_string(const char* key) const;

  // The raw field (undefined when left out), and the object itself, for readers of richer types.
  Napi::Value get(const char* key) const { return object_.Get(key); }
  const Napi::Object& object() const { return object_; }
  Napi::Env env() const { return env_; }
  const std::string& what() const { return what_; }

 private:
  [[noreturn]] void fail(const char* key, const char* expected, const Napi::Value& got) const;

  Napi::Env env_;
  Napi::Object object_;
  std::string what_;
};

}  // namespace s3::napi
