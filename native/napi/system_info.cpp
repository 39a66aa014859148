// N-API systemInfo(): build, CPU, CUDA and optional-library facts for `swarm doctor`.
#include "napi/system_info.h"

#include <string>
#include <thread>

#include "core/cpu_features.h"
#include "core/dynamic_library.h"
#include "core/thread_pool.h"
#include "cpu/convert.h"
#ifdef S3_WITH_CUDA
#include "cuda/device_info.h"
#endif

#ifndef S3_BUILD_SYSTEM
#define S3_BUILD_SYSTEM "unknown"
#endif

namespace s3::napi {
namespace {

std::string compiler_name() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return "g++ " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." + std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

Napi::Object cpu_object(Napi::Env env) {
  const CpuInfo& info = cpu_info();
  Napi::Object features = Napi::Object::New(env);
  features.Set("avx2", info.avx2);
  features.Set("fma", info.fma);
  features.Set("f16c", info.f16c);
  features.Set("avx512f", info.avx512f);
  features.Set("avx512bw", info.avx512bw);
  features.Set("avx512vl", info.avx512vl);
  features.Set("avx512dq", info.avx512dq);
  features.Set("avx512bf16", info.avx512bf16);
  features.Set("avx512fp16", info.avx512fp16);
  features.Set("avx512vnni", info.avx512vnni);
  features.Set("amxTile", info.amx_tile);
  features.Set("amxBf16", info.amx_bf16);
  features.Set("amxInt8", info.amx_int8);

  Napi::Object cpu = Napi::Object::New(env);
  cpu.Set("brand", info.brand.empty() ? std::string("unknown CPU") : info.brand);
  cpu.Set("logicalCores", static_cast<double>(std::thread::hardware_concurrency()));
  cpu.Set("threads", static_cast<double>(default_thread_pool().num_threads()));
  cpu.Set("features", features);
  cpu.Set("simdLevel", simd_level_name(info.level));
  cpu.Set("supportedSimdLevel", simd_level_name(info.supported_level));
  cpu.Set("kernels", cpu::convert_kernels().name);
  return cpu;
}

Napi::Object cuda_object(Napi::Env env) {
  Napi::Object cuda = Napi::Object::New(env);
  Napi::Array devices = Napi::Array::New(env);
#ifdef S3_WITH_CUDA
  const cuda::DeviceQuery query = cuda::query_devices();
  cuda.Set("compiled", true);
  cuda.Set("deviceCount", query.device_count);
  cuda.Set("driverVersion", query.driver_version);
  cuda.Set("runtimeVersion", query.runtime_version);
  for (size_t i = 0; i < query.devices.size(); ++i) {
    const cuda::DeviceInfo& d = query.devices[i];
    Napi::Object device = Napi::Object::New(env);
    device.Set("index", d.index);
    device.Set("name", d.name);
    device.Set("totalMemory", static_cast<double>(d.total_memory));
    device.Set("computeCapability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor));
    device.Set("multiprocessors", d.multiprocessors);
    devices.Set(static_cast<uint32_t>(i), device);
  }
  cuda.Set("error", query.error);
#else
  cuda.Set("compiled", false);
  cuda.Set("deviceCount", 0);
  cuda.Set("driverVersion", 0);
  cuda.Set("runtimeVersion", 0);
  cuda.Set("error", "built without CUDA");
#endif
  cuda.Set("devices", devices);
  return cuda;
}

Napi::Object probe_object(Napi::Env env, const LibraryProbe& probe) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("found", probe.found);
  result.Set("path", probe.path);
  result.Set("error", probe.error);
  return result;
}

Napi::Value system_info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object result = Napi::Object::New(env);
  result.Set("addonVersion", "0.1.0");
  result.Set("buildSystem", S3_BUILD_SYSTEM);
  result.Set("compiler", compiler_name());
  result.Set("napiVersion", NAPI_VERSION);
  result.Set("cpu", cpu_object(env));
  result.Set("cuda", cuda_object(env));
  Napi::Object libraries = Napi::Object::New(env);
  libraries.Set("cublasLt", probe_object(env, probe_library(cublaslt_candidates())));
  libraries.Set("nccl", probe_object(env, probe_library(nccl_candidates())));
  result.Set("libraries", libraries);
  return result;
}

}  // namespace

void register_system_info(Napi::Env env, Napi::Object exports) {
  exports.Set("systemInfo", Napi::Function::New(env, system_info, "systemInfo"));
}

}  // namespace s3::napi
