// The AVX-512 AdamW update table (compiled with the AVX-512 flags; called only after run-time
// detection): adamw_lanes.h at 16 floats per vector.
#include "cpu/adamw_lanes.h"
#include "cpu/adamw_update.h"

namespace s3::cpu {

const AdamwUpdateKernels kAdamwUpdateAvx512 = {"avx512", AdamwLanes<16>::update};

}  // namespace s3::cpu
