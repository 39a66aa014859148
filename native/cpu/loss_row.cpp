// The loss rows' passes; see loss_row.h. The baseline table runs loss_row_lanes.h at SSE2's 2 doubles
// per vector; the AVX2 and AVX-512 tables live in loss_row_avx2.cpp and loss_row_avx512.cpp.
#include "cpu/loss_row.h"

#include "cpu/kernel_select.h"
#include "cpu/loss_row_lanes.h"

namespace s3::cpu {
namespace {

const LossRowKernels kLossRowScalar = {"scalar", LossRowLanes<2>::exp_sums, LossRowLanes<2>::dlogits};

}  // namespace

const LossRowKernels* loss_row_kernels_for(SimdLevel level) {
  return select_kernels<LossRowKernels>({&kLossRowScalar, &kLossRowAvx2, &kLossRowAvx512}, level);
}

const LossRowKernels& loss_row_kernels() {
  static const LossRowKernels& chosen = *loss_row_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
