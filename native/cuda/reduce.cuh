// reduce.cuh: warp and block reductions the kernels share (device code, included by .cu files
// only). Every reduction is a fixed tree (butterfly shuffles, then warp results in warp order), so
// for a given block size its result never depends on timing: the kernels are deterministic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace s3::cuda {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

template <typename T>
__device__ inline T warp_sum(T value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(kFullMask, value, offset);
  return value;
}

template <typename T>
__device__ inline T warp_max(T value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const T other = __shfl_xor_sync(kFullMask, value, offset);
    value = other > value ? other : value;
  }
  return value;
}

template <typename T>
__device__ inline T warp_min(T value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const T other = __shfl_xor_sync(kFullMask, value, offset);
    value = other < value ? other : value;
  }
  return value;
}

// Block-wide reductions for blockDim.x a multiple of 32 (≤ 1024); every thread gets the result.
// `scratch` holds 32 values of T in shared memory; the call synchronizes the block twice.
template <typename T, typename Op>
__device__ inline T block_reduce(T value, T* scratch, Op warp_op, T identity) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  value = warp_op(value);
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  T result = lane < warps ? scratch[lane] : identity;
  result = warp_op(result);
  __syncthreads();
  return result;
}

template <typename T>
__device__ inline T block_sum(T value, T* scratch) {
  return block_reduce(value, scratch, [](T v) { return warp_sum(v); }, T(0));
}

template <typename T>
__device__ inline T block_max(T value, T* scratch, T identity) {
  return block_reduce(value, scratch, [](T v) { return warp_max(v); }, identity);
}

template <typename T>
__device__ inline T block_min(T value, T* scratch, T identity) {
  return block_reduce(value, scratch, [](T v) { return warp_min(v); }, identity);
}

// Reduces `count` ≤ kMax values per thread over the block (max or sum; blockDim.x a multiple of 32)
// in one exchange: each warp's butterfly, then the warps' results added (or compared) in warp
// order; every thread gets the results. scratch: [(blockDim.x / 32) × kMax] shared floats; the call
// synchronizes the block twice.
template <bool kIsMax, int kMax>
__device__ inline void block_reduce_each(float (&value)[kMax], int count, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int g = 0; g < kMax; g++) {
    if (g < count) value[g] = kIsMax ? warp_max(value[g]) : warp_sum(value[g]);
  }
  if (lane == 0) {
#pragma unroll
    for (int g = 0; g < kMax; g++) {
      if (g < count) scratch[warp * kMax + g] = value[g];
    }
  }
  __syncthreads();
#pragma unroll
  for (int g = 0; g < kMax; g++) {
    if (g >= count) continue;
    float r = scratch[g];
    for (int w = 1; w < warps; w++) r = kIsMax ? fmaxf(r, scratch[w * kMax + g]) : r + scratch[w * kMax + g];
    value[g] = r;
  }
  __syncthreads();
}

// Blocks for n items of `per_block` each, at least 1.
inline unsigned blocks_for(int64_t n, int64_t per_block) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  return unsigned(blocks > 0 ? blocks : 1);
}

}  // namespace s3::cuda
