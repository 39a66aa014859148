// adamw.h: the optimizer's device half, twin of train/adamw: the gradients' global norm (a sum of
// squares in double over a fixed grid, then its partials in order: deterministic, but in another
// order than the CPU's, so the norm agrees with it to double rounding) and the per-parameter
// update with core/ops/adamw.h's arithmetic, for f32 or bf16 moments (stochastic rounding with the
// CPU's Philox bits). The caller plans each update with train::adamw_plan_update from the norm, as
// the CPU step does, so rates, warm-up and clipping are one piece of code. Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/ops/adamw.h"

namespace s3::cuda {

// Device scratch gradient_norm needs (doubles, 8-byte aligned).
size_t gradient_norm_scratch_bytes();

// √Σ grads[i]² over n values; waits for the stream (the update needs the norm on the host).
double gradient_norm(const float* grads, size_t n, void* scratch, cudaStream_t stream);

// params, m, v: [n] f32, updated; grads: [n] f32.
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const ops::AdamWCoefficients& k,
                  cudaStream_t stream);

// The same with bf16 moments (bits); seed and step pick the rounding's random bits
// (ops::kAdamWRoundingStream), as train::adamw_step does.
void adamw_update_bf16(float* params, const float* grads, uint16_t* m, uint16_t* v, size_t n,
                       const ops::AdamWCoefficients& k, uint64_t seed, uint32_t step, cudaStream_t stream);

}  // namespace s3::cuda
