// The AVX2 AdamW update table (compiled with the AVX2 flags; called only after run-time
// detection): adamw_lanes.h at 8 floats per vector.
#include "cpu/adamw_lanes.h"
#include "cpu/adamw_update.h"

namespace s3::cpu {

const AdamwUpdateKernels kAdamwUpdateAvx2 = {"avx2", AdamwLanes<8>::update};

}  // namespace s3::cpu
