// The AVX2 SwiGLU table (compiled with -mavx2 -mfma -mf16c; called only after run-time detection):
// swiglu_lanes.h at 8 floats per vector.
#include "cpu/swiglu.h"
#include "cpu/swiglu_lanes.h"

namespace s3::cpu {

const SwigluKernels kSwigluAvx2 = {"avx2", SwigluLanes<8>::forward, SwigluLanes<8>::backward};

}  // namespace s3::cpu
