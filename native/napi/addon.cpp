// The entry point of s3_native.node: registers every exported function and class.
#include <napi.h>

#include "napi/collective.h"
#include "napi/engine.h"
#include "napi/model.h"
#include "napi/system_info.h"
#include "napi/train_bench.h"
#include "napi/trainer.h"
#include "napi/weight_link.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  s3::napi::register_system_info(env, exports);
  s3::napi::register_model(env, exports);
  s3::napi::register_engine(env, exports);
  s3::napi::register_trainer(env, exports);
  s3::napi::register_collective(env, exports);
  s3::napi::register_train_bench(env, exports);
  s3::napi::register_weight_link(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(s3_native, Init)
