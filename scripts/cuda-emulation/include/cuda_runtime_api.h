// Stand-in for the CUDA runtime header in the CPU emulation (scripts/cuda-emulation): the types,
// constants and calls the emulated sources use, with host meanings ("device" memory is host memory,
// every launch has finished when it returns, so every call succeeds at once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using cudaStream_t = struct CUstream_st*;
using cudaEvent_t = struct CUevent_st*;
enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInsufficientDriver = 35, cudaErrorNoDevice = 100,
                   cudaErrorNotReady = 600, cudaErrorNotSupported = 801 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
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
  if (bytes > (size_t(141) << 30)) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(256, (bytes / 256 + 1) * 256);
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*p, 0xFF, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) { std::memmove(to, from, bytes); return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind, cudaStream_t = nullptr) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

// Streams, events and device queries: one emulated device, every call done when it returns.
enum { cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) { *stream = nullptr; return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) { *stream = nullptr; return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* event) { *event = nullptr; return cudaSuccess; }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) { *event = nullptr; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return cudaSuccess; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) { std::memset(p, value, bytes); return cudaSuccess; }
// An H200-sized device (what the GPU tests were written for), sm_90.
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *total_bytes = size_t(141) << 30;
  *free_bytes = *total_bytes;
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
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
// CUDA graphs are not emulated: capture is refused, as a runtime without graph support would.
using cudaGraph_t = struct CUgraph_st*;
using cudaGraphExec_t = struct CUgraphExec_st*;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaErrorNotSupported; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t*) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t, unsigned long long = 0) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }
