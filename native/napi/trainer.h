// N-API binding of native/train (the CPU trainer): class Trainer(directory, options).
#pragma once

#include <napi.h>

namespace s3::napi {

void register_trainer(Napi::Env env, Napi::Object exports);

}  // namespace s3::napi
