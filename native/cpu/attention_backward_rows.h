// attention_backward_rows.h: the per-row elementwise work of the training attention
// (attention_backward.cpp), one implementation per SIMD level: the exponentials of a score row
// dominate once the products go through the matmul_nn kernels (a 2,048-token sequence takes
// T²/2 of them per head, three times per step). Vector levels use a degree-7 polynomial for
// exp on [−ln2/2, ln2/2] (relative error about 1e-7) and sum lanes in a fixed order.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace s3::cpu {

struct AttentionRowKernels {
  const char* name;
  // row[j] ← exp(row[j]·scale − m) for j < n, m = max_j row[j]·scale; returns Σ_j row[j], sets *max.
  float (*softmax_exp)(float* row, int64_t n, float scale, float* max);
  // p[j] ← exp(p[j]·scale − lse); ds[j] ← p[j]·(ds[j] − delta)·scale, for j < n.
  void (*probs_and_grad)(float* p, float* ds, int64_t n, float scale, float lse, float delta);
};

const AttentionRowKernels* attention_row_kernels_for(SimdLevel level);  // nullptr if not built
const AttentionRowKernels& attention_row_kernels();                     // cpu_info().level's

extern const AttentionRowKernels kAttentionRowsAvx2;
extern const AttentionRowKernels kAttentionRowsAvx512;

}  // namespace s3::cpu
