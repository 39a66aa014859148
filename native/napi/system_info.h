// N-API: systemInfo() — the facts `swarm doctor` prints (build, CPU, CUDA, optional libraries).
#pragma once
#include <napi.h>

namespace s3::napi {

// Adds systemInfo() to the addon's exports.
void register_system_info(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
