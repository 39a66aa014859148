// The AVX-512 SwiGLU table (compiled with the AVX-512 flags; called only after run-time detection):
// swiglu_lanes.h at 16 floats per vector.
#include "cpu/swiglu.h"
#include "cpu/swiglu_lanes.h"

namespace s3::cpu {

const SwigluKernels kSwigluAvx512 = {"avx512", SwigluLanes<16>::forward, SwigluLanes<16>::backward};

}  // namespace s3::cpu
