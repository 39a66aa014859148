// N-API: turning native exceptions into JS errors, shared by every binding of the addon.
#pragma once
#include <napi.h>

#include <stdexcept>

namespace s3::napi {

// Runs `fn`; std::out_of_range becomes a JS RangeError and any other std::exception a JS Error,
// both with the native message. JS errors thrown inside pass through unchanged.
template <typename Fn>
auto guarded(Napi::Env env, Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::out_of_range& e) {
    throw Napi::RangeError::New(env, e.what());
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

}  // namespace s3::napi
