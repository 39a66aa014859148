// N-API: the native train::Trainer inside a JS Trainer object, for other bindings that read it in
// place (the engine's loadWeightsFromTrainer) instead of copying its tensors through JS.
#pragma once
#include <napi.h>

#include "train/trainer.h"

namespace s3::napi {

// The trainer wrapped by `value`, which must be an object made by the addon's Trainer class (a
// type tag proves it). Throws a JS TypeError naming `what` otherwise, and a JS Error while an
// accumulate is running on the trainer (its parameters are then in use on another thread).
const train::Trainer& unwrap_idle_trainer(Napi::Env env, Napi::Value value, const char* what);

}  // namespace s3::napi
