// Stand-in for the CUDA runtime header in the CPU emulation (scripts/cuda-emulation): the types,
// constants and calls the emulated sources use, with host meanings ("device" memory is host memory,
// every launch has finished when it returns, so every call succeeds at once).
#pragma once

#include <cstddef>
#include <cstdint>
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
