// N-API: the inference engine (native/engine) as the `Engine` class, whose generate and score
// return promises resolved from the scheduler thread through one thread-safe function, and
// `sampleLogits`, the engine's sampler on one row of logits (for reference computations). Weights
// come from a checkpoint folder, an in-process trainer, or a trainer elsewhere over a weight link
// (receiveWeights; napi/weight_link.h is the sending side).
#pragma once
#include <napi.h>

namespace s3::napi {

// Adds Engine and sampleLogits to the addon's exports.
void register_engine(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
