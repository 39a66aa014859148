// adamw_update.h: the f32-moment AdamW update of a run of parameters (core/ops/adamw.h's
// adamw_update on each), one implementation per SIMD level, all from adamw_lanes.h: the same IEEE
// operations in the same order on every lane, so every level gives the bits of the scalar formula
// (and of the device trainer's, which runs the same header).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/ops/adamw.h"

namespace s3::cpu {

struct AdamwUpdateKernels {
  const char* name;
  // ops::adamw_update(k, grads[i], m[i], v[i], params[i]) for i < n.
  void (*update)(const ops::AdamWCoefficients& k, const float* grads, float* m, float* v, float* params, int64_t n);
};

const AdamwUpdateKernels* adamw_update_kernels_for(SimdLevel level);
const AdamwUpdateKernels& adamw_update_kernels();

extern const AdamwUpdateKernels kAdamwUpdateAvx2;
extern const AdamwUpdateKernels kAdamwUpdateAvx512;

}  // namespace s3::cpu
