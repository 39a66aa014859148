// The AVX-512 loss-row table (compiled with the AVX-512 flags; called only after run-time detection):
// loss_row_lanes.h at 8 doubles per vector.
#include "cpu/loss_row.h"
#include "cpu/loss_row_lanes.h"

namespace s3::cpu {

const LossRowKernels kLossRowAvx512 = {"avx512", LossRowLanes<8>::exp_sums, LossRowLanes<8>::dlogits};

}  // namespace s3::cpu
