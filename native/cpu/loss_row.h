// loss_row.h: the per-vocabulary passes of the fused LM-head loss's rows (train/losses.cpp), one
// table per SIMD level, all from loss_row_lanes.h so every level gives the same bits. For a row of
// logits z [V] with maximum max, at temperature τ:
//   exp_sums: s_v = (z_v − max, in f32) / τ in double, e_v = e^(s_v) (loss_row_lanes.h's own
//             double e^x, about 1 ulp), and total = Σ e_v, weighted = Σ e_v · s_v, each summed in
//             eight interleaved partial sums (v mod 8) combined in a fixed order;
//   dlogits:  z_v = float(coef · e_v · inv_total / τ), core/ops/token_loss.h's token_loss_dlogit
//             with coef = −(g + draw_total), bit for bit.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace s3::cpu {

struct LossRowKernels {
  const char* name;
  void (*exp_sums)(double* e, const float* z, int64_t V, float max, double temperature, double* total,
                   double* weighted);
  void (*dlogits)(float* z, const double* e, int64_t V, double coef, double inv_total, double temperature);
};

const LossRowKernels* loss_row_kernels_for(SimdLevel level);
const LossRowKernels& loss_row_kernels();

extern const LossRowKernels kLossRowAvx2;
extern const LossRowKernels kLossRowAvx512;

}  // namespace s3::cpu
