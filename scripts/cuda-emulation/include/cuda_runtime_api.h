// Stand-in for the CUDA runtime header in the CPU emulation (scripts/cuda-emulation): the types,
// constants and calls the emulated sources use, with host meanings ("device" memory is host memory,
// work enqueued on a stream has finished when the call returns) — except while a stream is being
// captured into a CUDA graph: then its launches, device copies and memsets are recorded, with the
// values of their parameters at capture, and run when the graph is launched, and the calls a
// capture prohibits (allocating, synchronizing, copying host memory) fail and invalidate it, so
// that graph code is checked for what CUDA would refuse or replay differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInsufficientDriver = 35, cudaErrorNoDevice = 100,
                   cudaErrorIllegalState = 401, cudaErrorNotReady = 600, cudaErrorNotSupported = 801,
                   cudaErrorStreamCaptureUnsupported = 900, cudaErrorStreamCaptureInvalidated = 901,
                   cudaErrorStreamCaptureImplicit = 906 };

// Work on a stream: a graph's nodes, each run in order when the graph is launched.
using EmulatedWork = std::vector<std::function<void()>>;
// A stream: its work runs when enqueued unless the stream is being captured.
struct CUstream_st {
  EmulatedWork* captured = nullptr;  // while capturing: the graph's nodes so far
  bool invalidated = false;          // a call the capture prohibits was made (EndCapture fails)
};
struct CUgraph_st { EmulatedWork nodes; };
struct CUgraphExec_st { EmulatedWork nodes; };
using cudaStream_t = CUstream_st*;
using cudaEvent_t = struct CUevent_st*;
using cudaGraph_t = CUgraph_st*;
using cudaGraphExec_t = CUgraphExec_st*;

namespace cuda_emulation {
// The stream this host thread is capturing (s3 captures in thread-local mode), or null.
inline thread_local cudaStream_t capturing = nullptr;
// What cudaGetLastError returns next: a launch the capture refused.
inline cudaError_t last_error = cudaSuccess;
// Whether this thread is capturing; if so the call asking is one CUDA prohibits during a capture
// (an allocation, a synchronization, a copy of host memory), which invalidates it.
inline bool prohibited_by_capture() {
  if (capturing == nullptr) return false;
  capturing->invalidated = true;
  return true;
}
// Runs `work` now, or records it as a node of the graph being captured from `stream`. Work on the
// legacy stream from a thread that is capturing would run outside the graph: refused, as CUDA does
// where the captured stream synchronizes with it.
inline cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) {
  if (stream != nullptr && stream->captured != nullptr) {
    stream->captured->push_back(std::move(work));
    return cudaSuccess;
  }
  if (stream == nullptr && prohibited_by_capture()) return cudaErrorStreamCaptureImplicit;
  work();
  return cudaSuccess;
}
}  // namespace cuda_emulation

enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() {
  const cudaError_t e = cuda_emulation::last_error;
  cuda_emulation::last_error = cudaSuccess;
  return e;
}
inline const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaError (emulation)"; }
inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "not available in the CPU emulation"; }
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
// An H100/H200's opt-in shared memory per block.
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) { *value = 232448; return cudaSuccess; }
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) { return cudaSuccess; }

// One emulated device; its memory is the host's.
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
inline cudaError_t cudaGetDeviceCount(int* count) { *count = 1; return cudaSuccess; }
// 256-byte aligned, as cudaMalloc's blocks are (the GEMMs check their operands' alignment), and
// filled with 0xFF bytes (NaN as f32 and as bf16), so a kernel that reads memory nothing wrote gives
// NaN rather than whatever the host's allocator recycled (compute-sanitizer's initcheck, roughly).
// More than cudaMemGetInfo's total is refused, as on a device.
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = nullptr;
  if (cuda_emulation::prohibited_by_capture()) return cudaErrorStreamCaptureUnsupported;
  if (bytes > (size_t(141) << 30)) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(256, (bytes / 256 + 1) * 256);
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*p, 0xFF, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) {
  if (cuda_emulation::prohibited_by_capture()) return cudaErrorStreamCaptureUnsupported;
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  if (cuda_emulation::prohibited_by_capture()) return cudaErrorStreamCaptureUnsupported;
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
// A captured copy is a node; one touching host memory is refused (pageable memory cannot be captured,
// and the emulation has no pinned memory), as it would read or write the host at replay.
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = nullptr) {
  if (stream != nullptr && stream->captured != nullptr && kind != cudaMemcpyDeviceToDevice) {
    stream->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  return cuda_emulation::enqueue(stream, [=] { std::memmove(to, from, bytes); });
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  if (cuda_emulation::prohibited_by_capture()) return cudaErrorStreamCaptureUnsupported;
  std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  return cuda_emulation::prohibited_by_capture() ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (stream != nullptr && stream->captured != nullptr) {
    stream->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  return cudaSuccess;
}

// Streams, events and device queries: one emulated device, every call done when it returns.
enum { cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) { *stream = new CUstream_st; return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) { *stream = new CUstream_st; return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream != nullptr) delete stream->captured;
  delete stream;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* event) { *event = nullptr; return cudaSuccess; }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) { *event = nullptr; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return cudaSuccess; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream = nullptr) {
  return cuda_emulation::enqueue(stream, [=] { std::memset(p, value, bytes); });
}
// An H200-sized device (what the GPU tests were written for), sm_90, whose free memory is what the
// host has available (its memory is the host's: MemAvailable of /proc/meminfo where there is one).
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *total_bytes = size_t(141) << 30;
  *free_bytes = *total_bytes;
  if (std::FILE* meminfo = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    while (std::fgets(line, sizeof line, meminfo) != nullptr) {
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    }
    std::fclose(meminfo);
    if (kib > 0 && size_t(kib) * 1024 < *free_bytes) *free_bytes = size_t(kib) * 1024;
  }
  return cudaSuccess;
}
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major, minor, multiProcessorCount;
};
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  std::strcpy(prop->name, "emulated sm_90 (scripts/cuda-emulation)");
  prop->totalGlobalMem = size_t(141) << 30;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int* version) { *version = 13000; return cudaSuccess; }
inline cudaError_t cudaDriverGetVersion(int* version) { *version = 13000; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (stream != nullptr && stream->captured != nullptr) {
    stream->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  return cudaSuccess;
}
// CUDA graphs: a capture records the stream's work (cuda_emulation::enqueue), a launch runs it.
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (stream == nullptr) return cudaErrorStreamCaptureUnsupported;  // the legacy stream cannot be captured
  if (stream->captured != nullptr || cuda_emulation::capturing != nullptr) return cudaErrorIllegalState;
  stream->captured = new EmulatedWork;
  stream->invalidated = false;
  cuda_emulation::capturing = stream;
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  *graph = nullptr;
  if (stream == nullptr || stream->captured == nullptr || cuda_emulation::capturing != stream) return cudaErrorIllegalState;
  EmulatedWork* nodes = stream->captured;
  stream->captured = nullptr;
  cuda_emulation::capturing = nullptr;
  if (stream->invalidated) {
    delete nodes;
    return cudaErrorStreamCaptureInvalidated;
  }
  *graph = new CUgraph_st{std::move(*nodes)};
  delete nodes;
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long = 0) {
  *exec = new CUgraphExec_st{graph->nodes};
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  return cuda_emulation::enqueue(stream, [exec] {
    for (const std::function<void()>& node : exec->nodes) node();
  });
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) { delete graph; return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) { delete exec; return cudaSuccess; }
