// host_device.h: S3_HOST_DEVICE marks functions compiled for both the CPU and CUDA kernels
// (__host__ __device__ under nvcc, nothing otherwise), so both sides share one implementation.
#pragma once

#ifdef __CUDACC__
#define S3_HOST_DEVICE __host__ __device__
#else
#define S3_HOST_DEVICE
#endif
