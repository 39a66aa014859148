// The f32-moment AdamW update (see adamw_update.h): the baseline table runs adamw_lanes.h at SSE2's
// 4 floats per vector; the AVX2 and AVX-512 tables live in adamw_update_avx2.cpp and
// adamw_update_avx512.cpp.
#include "cpu/adamw_update.h"

#include "cpu/adamw_lanes.h"
#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

const AdamwUpdateKernels kAdamwUpdateScalar = {"scalar", AdamwLanes<4>::update};

}  // namespace

const AdamwUpdateKernels* adamw_update_kernels_for(SimdLevel level) {
  return select_kernels<AdamwUpdateKernels>({&kAdamwUpdateScalar, &kAdamwUpdateAvx2, &kAdamwUpdateAvx512}, level);
}

const AdamwUpdateKernels& adamw_update_kernels() {
  static const AdamwUpdateKernels& chosen = *adamw_update_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
