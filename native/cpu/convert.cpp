// Chooses the bulk-conversion kernels for the SIMD level detected at run time; see convert.h.
#include "cpu/convert.h"

#include "core/dtype.h"
#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

void f32_to_bf16_scaled_scalar(const float* src, float scale, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = f32_to_bf16(src[i] * scale);
}

const ConvertKernels kConvertScalar = {"scalar", convert_bf16_to_f32, convert_f32_to_bf16, f32_to_bf16_scaled_scalar,
                                       convert_fp8e4m3_to_f32};

}  // namespace

const float* fp8e4m3_table() {
  struct Table {
    alignas(64) float value[256];
    Table() {
      for (int code = 0; code < 256; ++code) value[code] = fp8e4m3_to_f32(uint8_t(code));
    }
  };
  static const Table table;
  return table.value;
}

const ConvertKernels* convert_kernels_for(SimdLevel level) {
  return select_kernels<ConvertKernels>({&kConvertScalar, &kConvertAvx2, &kConvertAvx512}, level);
}

const ConvertKernels& convert_kernels() {
  static const ConvertKernels& chosen = *convert_kernels_for(cpu_info().level);
  return chosen;
}

}  // namespace s3::cpu
