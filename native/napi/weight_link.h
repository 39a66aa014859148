// N-API: the sending side of a weight link (model/weight_link.h), class WeightsSnapshot: one weights
// version taken from a trainer or read from a checkpoint folder, kept so it can be
// sent again (a server that restarts gets the version it should sample with, even after the trainer
// has moved on). Engine.receiveWeights (napi/engine.h) is the receiving side.
#pragma once
#include <napi.h>

namespace s3::napi {

// Adds WeightsSnapshot to the addon's exports.
void register_weight_link(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
