// dtype.cpp: dtype names and sizes, and the bulk array conversions built on the scalar ones in
// dtype.h (plain loops at the baseline ISA, so the rounding rules live in one place; SIMD
// variants belong to the CPU kernels, which dispatch on cpu_features).
#include "core/dtype.h"

namespace s3 {

namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::F32, "F32", 4},         {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I32, "I32", 4}, {DType::I64, "I64", 8},
    {DType::U8, "U8", 1},           {DType::BOOL, "BOOL", 1},
};

const DTypeEntry& entry_for(DType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  return kDTypes[0];  // unreachable: kDTypes lists every enumerator
}

}  // namespace

const char* dtype_name(DType dtype) { return entry_for(dtype).name; }

size_t dtype_size(DType dtype) { return entry_for(dtype).size; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeEntry& entry : kDTypes) {
    if (name == entry.name) return entry.dtype;
  }
  return std::nullopt;
}

void convert_bf16_to_f32(const uint16_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = bf16_to_f32(src[i]);
}

void convert_f32_to_bf16(const float* src, uint16_t* dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = f32_to_bf16(src[i]);
}

void convert_f16_to_f32(const uint16_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = f16_to_f32(src[i]);
}

void convert_f32_to_f16(const float* src, uint16_t* dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = f32_to_f16(src[i]);
}

// With only 256 codes a lookup table beats decoding the bits (about 10x faster here).
void convert_fp8e4m3_to_f32(const uint8_t* src, float* dst, size_t count) {
  static const struct Table {
    float value[256];
    Table() {
      for (int code = 0; code < 256; code++) value[code] = fp8e4m3_to_f32(uint8_t(code));
    }
  } table;
  for (size_t i = 0; i < count; i++) dst[i] = table.value[src[i]];
}

void convert_f32_to_fp8e4m3(const float* src, uint8_t* dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = f32_to_fp8e4m3(src[i]);
}

}  // namespace s3
