// N-API systemInfo(): build, CPU, CUDA and optional-library facts for `swarm doctor`.
#include "napi/system_info.h"

#include <optional>
#include <string>
#include <thread>

#include "bench/device_peaks.h"
#include "core/cpu_features.h"
#include "core/dynamic_library.h"
#include "core/thread_pool.h"
#include "cpu/convert.h"
#include "cpu/matmul.h"
#include "cpu/matmul_nn.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/weight_panels.h"
#include "engine/model_runner.h"
#include "model/device.h"
#include "napi/guarded.h"
#ifdef S3_WITH_CUDA
#include "cuda/attention.h"
#include "cuda/cublaslt.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "cuda/matmul.h"
#include "cuda/nccl.h"
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
  // The engine's linear layers (cpu/matmul.h): BF16 and FP8 weights in panels where this level reads them.
  cpu.Set("inferenceMatmul", cpu::weight_panels_used()
                                 ? std::string("BF16 and FP8 weights packed into panels (VDPBF16PS ") + cpu::matmul_kernels().name + ")"
                                 : std::string("weights as stored (") + cpu::matmul_kernels().name + ")");
  // The trainer's products at each precision.train (docs/training.md, "Precision").
  Napi::Object train = Napi::Object::New(env);
  train.Set("f32", std::string("f32 ") + cpu::matmul_nn_kernels().name);
  const cpu::MatmulNnBf16Kernels* bf16 = cpu::matmul_nn_bf16_kernels_for(info.level);
  train.Set("bf16", bf16 == nullptr ? std::string("f32 ") + cpu::matmul_nn_kernels().name + " on BF16-rounded operands (no AVX512-BF16)"
                    : bf16->tiles  ? std::string("AMX tiles (TDPBF16PS) ") + bf16->name
                                   : std::string("VDPBF16PS ") + bf16->name);
  cpu.Set("trainMatmul", train);
  return cpu;
}

#ifdef S3_WITH_CUDA
// What S3_CUDA_GRAPHS asks of a CUDA runner's decode steps (engine/model_runner.h).
std::string decode_graphs_setting() {
  try {
    return engine::cuda_graphs_enabled(engine::CudaGraphs::FromEnvironment)
               ? "decode steps of up to 256 sequences through CUDA graphs with split or reference attention (S3_CUDA_GRAPHS=1; never run on a GPU yet)"
               : "off: eager launches (S3_CUDA_GRAPHS=1 turns them on)";
  } catch (const std::exception& e) {
    return std::string("off: ") + e.what();
  }
}

// Which attention S3_CUDA_ATTENTION gives a CUDA runner (cuda/attention.h), or why it is refused.
std::string attention_setting() {
  try {
    return std::string(cuda::attention_kernel_name(cuda::attention_kernel_from_environment())) +
           " paged attention for prefill and decode (S3_CUDA_ATTENTION=split|tiled|tiled-mma, default split); heads outside "
           "its shapes use the double-precision reference kernel";
  } catch (const std::exception& e) {
    return std::string("refused: ") + e.what();
  }
}

// Whether a CUDA runner on device 0 would multiply FP8 weights block-scaled: its own decision
// (cuda::fp8_weights_block_scaled) on a probe GEMM, made once per process; else why not.
struct Fp8Decision {
  bool block_scaled = false;
  std::string why_not;
};

const Fp8Decision& fp8_decision(const cuda::CublasLtLoad& lt, const cuda::DeviceQuery& query) {
  static const Fp8Decision decision = [&] {
    Fp8Decision d;
    const int major = query.devices[0].compute_major, minor = query.devices[0].compute_minor;
    if (!cuda::fp8_block_scaling(*lt.library, major, minor)) {
      d.why_not = "block scaling needs cuBLASLt >= 12.9 and sm_90";
      return d;
    }
    try {
      cuda::DeviceAllocator allocator("(the FP8 probe of systemInfo)");
      cuda::Stream stream;
      cuda::Gemm probe(lt.library, allocator, stream.get(), 1024);
      d.block_scaled = cuda::fp8_weights_block_scaled(probe, major, minor);
      if (!d.block_scaled) d.why_not = "cuBLASLt " + lt.library->version_text() + " has no block-scaled FP8 algorithm here: " + probe.fp8_description();
    } catch (const std::exception& e) {
      d.why_not = std::string("the FP8 probe failed: ") + e.what();
    }
    return d;
  }();
  return decision;
}
#endif

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
    // The datasheet dense BF16 peak the device benchmarks' MFU uses (bench/device_peaks.h); null when unknown.
    const bench::NominalDevicePeak peak = bench::nominal_device_peak(d.name);
    device.Set("peakProduct", peak.bf16_tflops > 0 ? Napi::String::New(env, peak.product) : env.Null());
    device.Set("peakBf16Tflops", peak.bf16_tflops > 0 ? Napi::Number::New(env, peak.bf16_tflops) : env.Null());
    devices.Set(static_cast<uint32_t>(i), device);
  }
  cuda.Set("error", query.error);
  // The GEMM path: cuBLASLt's version, and whether FP8 weights multiply block-scaled or are widened
  // to BF16 first, as a runner on device 0 decides it.
  Napi::Object gemm = Napi::Object::New(env);
  const cuda::CublasLtLoad& lt = cuda::cublaslt();
  gemm.Set("cublasLtVersion", lt.library != nullptr ? lt.library->version_text() : std::string());
  gemm.Set("cublasLtPath", lt.library != nullptr ? lt.library->path : std::string());
  if (lt.library == nullptr || query.devices.empty()) {
    gemm.Set("fp8BlockScaling", false);
    gemm.Set("fp8Path", lt.library == nullptr ? "none (no cuBLASLt)" : "none (no CUDA device)");
  } else {
    const Fp8Decision& fp8 = fp8_decision(lt, query);
    gemm.Set("fp8BlockScaling", fp8.block_scaled);
    gemm.Set("fp8Path", fp8.block_scaled ? "cuBLASLt block-scaled FP8 (1x128 activations, 128x128 weights)"
                                         : "FP8 weights widened to BF16, then the BF16 GEMM (" + fp8.why_not + ")");
  }
  gemm.Set("error", lt.error);
  cuda.Set("gemm", gemm);
  cuda.Set("attention", attention_setting());
  cuda.Set("graphs", decode_graphs_setting());
  // NCCL for data-parallel collectives (cuda/nccl.h): opened, with its version, or why not.
  Napi::Object collectives = Napi::Object::New(env);
  const cuda::NcclLoad& nccl = cuda::process_nccl();
  collectives.Set("version", nccl.library != nullptr ? nccl.library->version_text() : std::string());
  collectives.Set("path", nccl.library != nullptr ? nccl.library->path : std::string());
  collectives.Set("error", nccl.error);
  cuda.Set("nccl", collectives);
#else
  cuda.Set("compiled", false);
  cuda.Set("deviceCount", 0);
  cuda.Set("driverVersion", 0);
  cuda.Set("runtimeVersion", 0);
  cuda.Set("error", "built without CUDA");
  Napi::Object gemm = Napi::Object::New(env);
  gemm.Set("cublasLtVersion", "");
  gemm.Set("cublasLtPath", "");
  gemm.Set("fp8BlockScaling", false);
  gemm.Set("fp8Path", "none (built without CUDA)");
  gemm.Set("error", "built without CUDA");
  cuda.Set("gemm", gemm);
  cuda.Set("attention", "none (built without CUDA)");
  cuda.Set("graphs", "none (built without CUDA)");
  Napi::Object collectives = Napi::Object::New(env);
  collectives.Set("version", "");
  collectives.Set("path", "");
  collectives.Set("error", "built without CUDA");
  cuda.Set("nccl", collectives);
#endif
  const model::DeviceAvailability availability = model::device_availability();
  cuda.Set("usable", availability.cuda_usable);
  cuda.Set("unusableReason", availability.cuda_reason);
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

// resolveDevice('auto' | 'cpu' | 'cuda') → 'cpu' | 'cuda': what that choice means on this machine;
// 'cuda' where CUDA cannot run throws with the reason.
Napi::Value resolve_device(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::optional<model::DeviceChoice> choice =
      info.Length() > 0 && info[0].IsString() ? model::parse_device_choice(info[0].As<Napi::String>().Utf8Value()) : std::nullopt;
  if (!choice) throw Napi::TypeError::New(env, "resolveDevice(choice): choice must be 'auto', 'cpu' or 'cuda'");
  return Napi::String::New(env, model::device_name(guarded(env, [&] { return model::resolve_device(*choice); })));
}

// deviceMemory() → {freeBytes, totalBytes} of CUDA device 0 now; throws where there is none or the
// addon was built without CUDA.
Napi::Value device_memory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#ifdef S3_WITH_CUDA
  const cuda::DeviceMemory memory = guarded(env, [] { return cuda::first_device_memory(); });
  Napi::Object result = Napi::Object::New(env);
  result.Set("freeBytes", double(memory.free_bytes));
  result.Set("totalBytes", double(memory.total_bytes));
  return result;
#else
  throw Napi::Error::New(env, "deviceMemory: this addon was built without CUDA");
#endif
}

}  // namespace

void register_system_info(Napi::Env env, Napi::Object exports) {
  exports.Set("systemInfo", Napi::Function::New(env, system_info, "systemInfo"));
  exports.Set("deviceMemory", Napi::Function::New(env, device_memory, "deviceMemory"));
  exports.Set("resolveDevice", Napi::Function::New(env, resolve_device, "resolveDevice"));
}

}  // namespace s3::napi
