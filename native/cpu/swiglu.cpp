// SwiGLU and the residual add; see swiglu.h. The baseline table runs swiglu_lanes.h at SSE2's 4
// floats per vector; the AVX2 and AVX-512 tables live in swiglu_avx2.cpp and swiglu_avx512.cpp.
#include "cpu/swiglu.h"

#include "cpu/kernel_select.h"
#include "cpu/swiglu_lanes.h"

namespace s3::cpu {
namespace {

const SwigluKernels kSwigluScalar = {"scalar", SwigluLanes<4>::forward, SwigluLanes<4>::backward};

}  // namespace

void swiglu_forward(float* out, const float* gate, const float* up, int64_t N) {
  swiglu_kernels().forward(out, gate, up, N);
}

void residual_forward(float* x, const float* delta, int64_t N) {
  for (int64_t i = 0; i < N; i++) x[i] += delta[i];
}

const SwigluKernels* swiglu_kernels_for(SimdLevel level) {
  return select_kernels<SwigluKernels>({&kSwigluScalar, &kSwigluAvx2, &kSwigluAvx512}, level);
}

const SwigluKernels& swiglu_kernels() {
  static const SwigluKernels& chosen = *swiglu_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
