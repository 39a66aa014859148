// N-API: the Qwen3 model on the CPU — `Model` (load a checkpoint folder, logits of a sequence),
// `initCheckpoint` (write a random checkpoint), `benchForward` / `benchDecode` / `machineLimits`
// (the figures of `swarm bench forward|decode`).
#pragma once
#include <napi.h>

namespace s3::napi {

// Adds Model, initCheckpoint, benchForward, benchDecode and machineLimits to the addon's exports.
void register_model(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
