// device_option.h: the runner options the Engine and Model bindings share, read in one place: `device`
// ('cpu' | 'cuda' | 'auto', resolved for this machine), `weights` ('stored' | 'fp8') and
// `kvCacheDtype` ('f32' | 'bf16' | 'fp8').
#pragma once
#include <napi.h>

#include "engine/model_runner.h"
#include "model/device.h"

namespace s3::napi {

// options.device resolved for this machine (model/device.h); 'auto' when absent. A bad value is a
// TypeError naming `what`; 'cuda' where CUDA cannot run is an Error with the reason.
model::Device device_option(Napi::Env env, Napi::Object options, const char* what);

// options.weights: 'stored' (default) or 'fp8' (quantized at load, model/fp8_quantize.h).
engine::WeightFormat weight_format_option(Napi::Env env, Napi::Object options, const char* what);

// options.kvCacheDtype, or `fallback` when absent; anything else is a TypeError starting with `what`.
KvDtype kv_dtype_option(Napi::Env env, Napi::Object options, const char* what, KvDtype fallback);

// {device, gemm, attention} of a runner, for stats() and doctor.
Napi::Object runner_description_object(Napi::Env env, const engine::RunnerDescription& description);

}  // namespace s3::napi
