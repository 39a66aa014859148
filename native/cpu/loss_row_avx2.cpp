// The AVX2 loss-row table (compiled with -mavx2 -mfma -mf16c; called only after run-time detection):
// loss_row_lanes.h at 4 doubles per vector.
#include "cpu/loss_row.h"
#include "cpu/loss_row_lanes.h"

namespace s3::cpu {

const LossRowKernels kLossRowAvx2 = {"avx2", LossRowLanes<4>::exp_sums, LossRowLanes<4>::dlogits};

}  // namespace s3::cpu
