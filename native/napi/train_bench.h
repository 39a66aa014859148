// N-API: `benchTrain`, the figures of `swarm bench train` (native/bench/train_bench).
#pragma once
#include <napi.h>

namespace s3::napi {

// Adds benchTrain(directory, {tokens, repetitions, warmUp}) to the addon's exports.
void register_train_bench(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
