// The SIMD conversion kernels (native/cpu/convert*) against the scalar conversions of core/dtype.h:
// bit-identical over every bf16 and fp8 value and over f32 edge cases and random bit patterns,
// at every length (to exercise the vector body and the tail), for each level this CPU supports.
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "cpu/convert.h"
#include "tests/simd_levels.h"
#include "tests/test_framework.h"

namespace {

using s3::tests::runnable_levels;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

TEST(convert_bf16_to_f32_every_value_every_level) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::ConvertKernels* k = s3::cpu::convert_kernels_for(level);
    std::vector<float> out(all.size());
    k->bf16_to_f32(all.data(), out.data(), all.size());
    for (uint32_t i = 0; i < 65536; ++i) CHECK_EQ(bits_of(out[i]), uint32_t(i) << 16);
  }
}

TEST(convert_f32_to_bf16_matches_scalar_rne_every_level) {
  std::vector<float> inputs;
  const uint32_t edges[] = {0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x3F808000, 0x3F818000,
                            0x3F807FFF, 0x3F808001, 0x7F7FFFFF, 0x7F7F8000, 0x7F800000, 0xFF800000, 0x7FC00000,
                            0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x3F800000, 0xC0490FDB};
  for (uint32_t e : edges) {
    float f;
    std::memcpy(&f, &e, 4);
    inputs.push_back(f);
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    inputs.push_back(f);
  }
  std::vector<uint16_t> expected(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) expected[i] = s3::f32_to_bf16(inputs[i]);
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::ConvertKernels* k = s3::cpu::convert_kernels_for(level);
    std::vector<uint16_t> out(inputs.size());
    k->f32_to_bf16(inputs.data(), out.data(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (out[i] != expected[i]) {
        s3test::fail(__FILE__, __LINE__, std::string(k->name) + ": input bits " + std::to_string(bits_of(inputs[i])) +
                                             " gave " + std::to_string(out[i]) + ", scalar " + std::to_string(expected[i]));
      }
    }
  }
}

// The scaled rounding (the training attention's normalized probabilities): the scalar product
// and rounding, bit for bit, at every length (vector body and tail) and for specials, subnormal
// products, overflow to infinity and NaN.
TEST(convert_f32_to_bf16_scaled_matches_the_scalar_product_and_rounding_every_level) {
  std::mt19937 rng(777);
  std::vector<float> inputs;
  const uint32_t edges[] = {0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x3F808000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000};
  for (uint32_t e : edges) {
    float f;
    std::memcpy(&f, &e, 4);
    inputs.push_back(f);
  }
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int i = 0; i < 5000; ++i) inputs.push_back(unit(rng));
  for (float scale : {1.0f / 3.0f, 1.0f / 1234.5f, 3.0e38f, 1.0e-30f}) {
    for (s3::SimdLevel level : runnable_levels()) {
      const s3::cpu::ConvertKernels* k = s3::cpu::convert_kernels_for(level);
      for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(17), size_t(255), size_t(257), inputs.size()}) {
        std::vector<uint16_t> out(n + 4, 0xDEAD);
        k->f32_to_bf16_scaled(inputs.data(), scale, out.data(), n);
        for (size_t i = 0; i < n; ++i) CHECK_EQ(out[i], s3::f32_to_bf16(inputs[i] * scale));
        for (size_t i = n; i < n + 4; ++i) CHECK_EQ(out[i], uint16_t(0xDEAD));
      }
    }
  }
}

TEST(convert_fp8_to_f32_every_value_every_level) {
  std::vector<uint8_t> all(256);
  for (int i = 0; i < 256; ++i) all[i] = uint8_t(i);
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::ConvertKernels* k = s3::cpu::convert_kernels_for(level);
    std::vector<float> out(256);
    k->fp8e4m3_to_f32(all.data(), out.data(), 256);
    for (int i = 0; i < 256; ++i) CHECK_EQ(bits_of(out[i]), bits_of(s3::fp8e4m3_to_f32(uint8_t(i))));
  }
}

TEST(convert_every_length_touches_exactly_n_elements) {
  for (s3::SimdLevel level : runnable_levels()) {
    const s3::cpu::ConvertKernels* k = s3::cpu::convert_kernels_for(level);
    for (size_t n = 0; n <= 70; ++n) {
      std::vector<uint16_t> src(n + 8, 0x3F80);  // 1.0
      std::vector<float> dst(n + 8, -7.0f);
      k->bf16_to_f32(src.data(), dst.data(), n);
      for (size_t i = 0; i < n + 8; ++i) CHECK_EQ(dst[i], i < n ? 1.0f : -7.0f);
      std::vector<uint16_t> back(n + 8, 0xDEAD);
      k->f32_to_bf16(dst.data(), back.data(), n);
      for (size_t i = 0; i < n + 8; ++i) CHECK_EQ(back[i], uint16_t(i < n ? 0x3F80 : 0xDEAD));
      std::vector<uint8_t> fp8(n + 8, 0x38);  // 1.0 in E4M3
      std::vector<float> wide(n + 8, -7.0f);
      k->fp8e4m3_to_f32(fp8.data(), wide.data(), n);
      for (size_t i = 0; i < n + 8; ++i) CHECK_EQ(wide[i], i < n ? 1.0f : -7.0f);
    }
  }
}

TEST(convert_dispatch_follows_detected_level) {
  const s3::cpu::ConvertKernels& chosen = s3::cpu::convert_kernels();
  CHECK_EQ(&chosen, s3::cpu::convert_kernels_for(s3::cpu_info().level));
}
