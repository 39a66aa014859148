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
enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorName(cudaError_t) { return "cudaSuccess"; }
inline const char* cudaGetErrorString(cudaError_t) { return "no error"; }
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
// An H100/H200's opt-in shared memory per block.
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) { *value = 232448; return cudaSuccess; }
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) { return cudaSuccess; }

// One emulated device; its memory is the host's.
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
inline cudaError_t cudaGetDeviceCount(int* count) { *count = 1; return cudaSuccess; }
inline cudaError_t cudaMalloc(void** p, size_t bytes) { *p = std::malloc(bytes); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) { std::memmove(to, from, bytes); return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind, cudaStream_t = nullptr) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
