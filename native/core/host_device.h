// host_device.h: S3_HOST_DEVICE marks functions compiled for both the CPU and CUDA kernels
// (__host__ __device__ under nvcc, nothing otherwise), so both sides share one implementation.
// The rounded f32 operations below keep nvcc from fusing a multiply and an add into one FMA where
// the CPU code rounds twice, so shared arithmetic gives the same bits on both sides.
#pragma once

#ifdef __CUDACC__
#define S3_HOST_DEVICE __host__ __device__
#else
#define S3_HOST_DEVICE
#endif

namespace s3 {

// a·b and a ± b, each rounded to nearest even on its own (never contracted into an FMA).
S3_HOST_DEVICE inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
S3_HOST_DEVICE inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
S3_HOST_DEVICE inline float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

// The same for doubles (the backward passes' per-row sums and coefficients).
S3_HOST_DEVICE inline double dmul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
S3_HOST_DEVICE inline double dadd_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
S3_HOST_DEVICE inline double dsub_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

}  // namespace s3
