// test_core_dtype.cpp: the dtype conversions against an independent reference. Each format's value
// table is built here from its definition with ldexp (not from the code under test); f32 → fmt
// must pick the nearest table value by exact double comparison, ties to the even code. Decoding
// is checked exhaustively; encoding at every midpoint between neighbours (and one f32 ulp either
// side), at named edge cases, and on millions of seeded random floats.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// A binary floating format without sign: magnitude of code c (exponent field e, mantissa m).
struct Format {
  int mantissa_bits;
  int bias;
  uint32_t largest_code;  // codes 0..largest_code are the non-negative values, in increasing order
  // The value the code one past the largest finite one stands for when rounding: inf for
  // IEEE formats (the next power of two, as if the exponent were unbounded), or none (fp8
  // saturates, so nothing lies beyond 448).
  bool overflow_to_inf;
};

constexpr Format kBf16{7, 127, 0x7F7F, true};
constexpr Format kF16{10, 15, 0x7BFF, true};
constexpr Format kFp8{3, 7, 0x7E, false};

double decode_magnitude(const Format& format, uint32_t code) {
  uint32_t exponent = code >> format.mantissa_bits;
  uint32_t mantissa = code & ((1u << format.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(double(mantissa), 1 - format.bias - format.mantissa_bits);
  return std::ldexp(double((1u << format.mantissa_bits) + mantissa), int(exponent) - format.bias - format.mantissa_bits);
}

struct ReferenceTable {
  Format format;
  std::vector<double> values;  // values[c] for c = 0..largest_code (+1: the overflow step)
};

ReferenceTable make_table(const Format& format) {
  ReferenceTable table{format, {}};
  for (uint32_t code = 0; code <= format.largest_code; code++) table.values.push_back(decode_magnitude(format, code));
  if (format.overflow_to_inf) table.values.push_back(decode_magnitude(format, format.largest_code + 1));
  return table;
}

// The code of the nearest table value to magnitude (>= 0, finite), ties to the even code.
uint32_t nearest_code(const ReferenceTable& table, double magnitude) {
  const std::vector<double>& values = table.values;
  size_t upper = size_t(std::lower_bound(values.begin(), values.end(), magnitude) - values.begin());
  if (upper == values.size()) return uint32_t(values.size() - 1);
  if (upper == 0 || values[upper] == magnitude) return uint32_t(upper);
  double below = magnitude - values[upper - 1], above = values[upper] - magnitude;
  if (below < above) return uint32_t(upper - 1);
  if (above < below) return uint32_t(upper);
  return uint32_t(upper % 2 == 0 ? upper : upper - 1);
}

uint16_t reference_f32_to_bf16(float value) {
  static const ReferenceTable table = make_table(kBf16);
  if (std::isnan(value)) return 0x7FC0;
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isinf(value)) return sign | 0x7F80;
  return uint16_t(sign | nearest_code(table, std::fabs(double(value))));  // code 0x7F80 is inf
}

uint16_t reference_f32_to_f16(float value) {
  static const ReferenceTable table = make_table(kF16);
  if (std::isnan(value)) return 0x7E00;
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isinf(value)) return sign | 0x7C00;
  return uint16_t(sign | nearest_code(table, std::fabs(double(value))));  // code 0x7C00 is inf
}

uint8_t reference_f32_to_fp8(float value) {
  static const ReferenceTable table = make_table(kFp8);
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return sign | 0x7F;
  if (std::isinf(value)) return sign | 0x7E;  // satfinite
  return uint8_t(sign | nearest_code(table, std::fabs(double(value))));
}

// NaNs compare by NaN-ness only (payload and quiet bit are the implementation's business).
void check_bf16(float value) {
  uint16_t got = f32_to_bf16(value), want = reference_f32_to_bf16(value);
  if (std::isnan(value)) {
    if (!std::isnan(bf16_to_f32(got))) s3test::fail(__FILE__, __LINE__, "f32_to_bf16(NaN) is not NaN");
    return;
  }
  if (got != want) {
    s3test::fail(__FILE__, __LINE__, "f32_to_bf16(" + s3test::show(value) + ") = " + std::to_string(got) +
                                         ", reference " + std::to_string(want));
  }
}

void check_f16(float value) {
  uint16_t got = f32_to_f16(value), want = reference_f32_to_f16(value);
  if (std::isnan(value)) {
    if (!std::isnan(f16_to_f32(got))) s3test::fail(__FILE__, __LINE__, "f32_to_f16(NaN) is not NaN");
    return;
  }
  if (got != want) {
    s3test::fail(__FILE__, __LINE__, "f32_to_f16(" + s3test::show(value) + ") = " + std::to_string(got) +
                                         ", reference " + std::to_string(want));
  }
}

void check_fp8(float value) {
  uint8_t got = f32_to_fp8e4m3(value), want = reference_f32_to_fp8(value);
  if (got != want) {
    s3test::fail(__FILE__, __LINE__, "f32_to_fp8e4m3(" + s3test::show(value) + ") = " + std::to_string(got) +
                                         ", reference " + std::to_string(want));
  }
}

// Every midpoint between neighbouring table values, and the f32 on either side of it, both signs.
template <typename Check>
void check_midpoints(const ReferenceTable& table, Check check) {
  for (size_t code = 0; code + 1 < table.values.size(); code++) {
    float midpoint = float((table.values[code] + table.values[code + 1]) / 2);
    CHECK_EQ(double(midpoint), (table.values[code] + table.values[code + 1]) / 2);  // exact in f32
    for (float value : {midpoint, std::nextafter(midpoint, 0.0f), std::nextafter(midpoint, 1e30f)}) {
      check(value);
      check(-value);
    }
  }
}

// Seeded random floats: uniformly random bit patterns, and patterns with an exponent near the
// format's range (where rounding, not saturation, decides), as f32 exponents in [min, max].
template <typename Check>
void check_random(uint64_t seed, size_t count, int min_exponent, int max_exponent, Check check) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(std::max(1, min_exponent + 127), std::min(254, max_exponent + 127));
  for (size_t i = 0; i < count; i++) {
    uint32_t bits = uint32_t(rng());
    if (i % 2 == 1) bits = (bits & 0x807FFFFFu) | (uint32_t(exponent(rng)) << 23);
    check(float_of(bits));
  }
}

}  // namespace

TEST(dtype_names_sizes_and_parse) {
  const DType all[] = {DType::F32, DType::F16, DType::BF16, DType::F8_E4M3, DType::I32, DType::I64, DType::U8, DType::BOOL};
  const char* names[] = {"F32", "F16", "BF16", "F8_E4M3", "I32", "I64", "U8", "BOOL"};
  const size_t sizes[] = {4, 2, 2, 1, 4, 8, 1, 1};
  for (size_t i = 0; i < 8; i++) {
    CHECK_EQ(std::string(dtype_name(all[i])), std::string(names[i]));
    CHECK_EQ(dtype_size(all[i]), sizes[i]);
    CHECK(parse_dtype(names[i]) == all[i]);
  }
  CHECK(!parse_dtype("F64").has_value());
  CHECK(!parse_dtype("f32").has_value());
  CHECK(!parse_dtype("F8_E5M2").has_value());
  CHECK(!parse_dtype("").has_value());
}

TEST(bf16_decode_exhaustive) {
  for (uint32_t code = 0; code < 0x10000; code++) {
    float value = bf16_to_f32(uint16_t(code));
    CHECK_EQ(bits_of(value), code << 16);
  }
}

TEST(bf16_round_trip_exhaustive) {
  for (uint32_t code = 0; code < 0x10000; code++) {
    float value = bf16_to_f32(uint16_t(code));
    uint16_t back = f32_to_bf16(value);
    if (std::isnan(value)) {
      CHECK(std::isnan(bf16_to_f32(back)));
      CHECK_EQ(uint32_t(back & 0x8000), code & 0x8000);
    } else {
      CHECK_EQ(uint32_t(back), code);
    }
  }
}

TEST(bf16_encode_edge_cases) {
  CHECK_EQ(f32_to_bf16(1.0f), 0x3F80);
  CHECK_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);         // tie, 1.0 is even
  CHECK_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);     // tie, rounds up to the even code
  CHECK_EQ(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-23f), 0x3F81);
  CHECK_EQ(f32_to_bf16(-0.0f), 0x8000);
  CHECK_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  CHECK_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  CHECK_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds past the largest bf16
  CHECK_EQ(f32_to_bf16(float_of(0x7F7F7FFFu)), 0x7F7F);              // just below the overflow tie
  CHECK_EQ(f32_to_bf16(float_of(0x00000001u)), 0x0000);              // smallest f32 subnormal
  CHECK_EQ(f32_to_bf16(float_of(0x00018000u)), 0x0002);              // subnormal tie to even
  // A signalling NaN whose payload lives only in the low bits must not become inf.
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(float_of(0x7F800001u)))));
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(float_of(0xFF800001u)))));
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  for (float value : {0.0f, 1e-40f, 3.14159f, -2.5e38f, 65504.0f, 1e-5f}) check_bf16(value);
}

TEST(bf16_encode_midpoints_and_random) {
  check_midpoints(make_table(kBf16), check_bf16);
  check_random(0xB16B16, 2000000, -126, 127, check_bf16);
}

TEST(f16_decode_exhaustive) {
  const ReferenceTable table = make_table(kF16);
  for (uint32_t code = 0; code < 0x10000; code++) {
    float value = f16_to_f32(uint16_t(code));
    uint32_t magnitude_code = code & 0x7FFF;
    CHECK_EQ(std::signbit(value), (code & 0x8000) != 0);
    if (magnitude_code > 0x7C00) {
      CHECK(std::isnan(value));
    } else if (magnitude_code == 0x7C00) {
      CHECK(std::isinf(value));
    } else {
      CHECK_EQ(double(std::fabs(value)), table.values[magnitude_code]);
    }
  }
}

TEST(f16_round_trip_exhaustive) {
  for (uint32_t code = 0; code < 0x10000; code++) {
    float value = f16_to_f32(uint16_t(code));
    uint16_t back = f32_to_f16(value);
    if (std::isnan(value)) {
      CHECK(std::isnan(f16_to_f32(back)));
    } else {
      CHECK_EQ(uint32_t(back), code);
    }
  }
}

TEST(f16_encode_edge_cases) {
  CHECK_EQ(f32_to_f16(65504.0f), 0x7BFF);
  CHECK_EQ(f32_to_f16(65519.996f), 0x7BFF);
  CHECK_EQ(f32_to_f16(65520.0f), 0x7C00);  // tie between 65504 (odd) and 2^16: overflow
  CHECK_EQ(f32_to_f16(-1e10f), 0xFC00);
  CHECK_EQ(f32_to_f16(0x1p-24f), 0x0001);  // smallest subnormal
  CHECK_EQ(f32_to_f16(0x1p-25f), 0x0000);  // half of it ties to zero
  CHECK_EQ(f32_to_f16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  CHECK_EQ(f32_to_f16(-0x1p-26f), 0x8000);
  CHECK_EQ(f32_to_f16(0x1p-14f), 0x0400);  // smallest normal
  CHECK_EQ(f32_to_f16(0x3FFp-24f + 0x1p-25f), 0x0400);  // largest subnormal + half ulp: tie up to even
  CHECK(std::isnan(f16_to_f32(f32_to_f16(float_of(0x7F800001u)))));
  for (float value : {0.0f, -0.0f, 1.0f / 3, 1e-7f, 1234.5678f, -0.1f}) check_f16(value);
}

TEST(f16_encode_midpoints_and_random) {
  check_midpoints(make_table(kF16), check_f16);
  check_random(0xF16F16, 2000000, -27, 17, check_f16);
}

TEST(fp8_decode_exhaustive) {
  const ReferenceTable table = make_table(kFp8);
  for (uint32_t code = 0; code < 256; code++) {
    float value = fp8e4m3_to_f32(uint8_t(code));
    CHECK_EQ(std::signbit(value), (code & 0x80) != 0);
    if ((code & 0x7F) == 0x7F) {
      CHECK(std::isnan(value));
    } else {
      CHECK_EQ(double(std::fabs(value)), table.values[code & 0x7F]);
    }
  }
  CHECK_EQ(fp8e4m3_to_f32(0x7E), 448.0f);
  CHECK_EQ(fp8e4m3_to_f32(0x01), 0x1p-9f);
  CHECK_EQ(fp8e4m3_to_f32(0x08), 0x1p-6f);
  CHECK_EQ(fp8e4m3_to_f32(0x38), 1.0f);
}

TEST(fp8_round_trip_exhaustive) {
  for (uint32_t code = 0; code < 256; code++) {
    float value = fp8e4m3_to_f32(uint8_t(code));
    CHECK_EQ(uint32_t(f32_to_fp8e4m3(value)), code);  // includes ±0 and both NaN codes
  }
}

TEST(fp8_encode_edge_cases) {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_EQ(f32_to_fp8e4m3(448.0f), 0x7E);
  CHECK_EQ(f32_to_fp8e4m3(464.0f), 0x7E);  // tie between 448 and the missing 480: saturate
  CHECK_EQ(f32_to_fp8e4m3(480.0f), 0x7E);
  CHECK_EQ(f32_to_fp8e4m3(1e30f), 0x7E);
  CHECK_EQ(f32_to_fp8e4m3(-1e30f), 0xFE);
  CHECK_EQ(f32_to_fp8e4m3(inf), 0x7E);
  CHECK_EQ(f32_to_fp8e4m3(-inf), 0xFE);
  CHECK_EQ(f32_to_fp8e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  CHECK_EQ(f32_to_fp8e4m3(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
  CHECK_EQ(f32_to_fp8e4m3(float_of(0x7F800001u)), 0x7F);  // signalling NaN
  CHECK_EQ(f32_to_fp8e4m3(0x1p-9f), 0x01);                // smallest subnormal
  CHECK_EQ(f32_to_fp8e4m3(0x1p-10f), 0x00);               // half of it ties to zero
  CHECK_EQ(f32_to_fp8e4m3(-0x1p-10f), 0x80);
  CHECK_EQ(f32_to_fp8e4m3(std::nextafter(0x1p-10f, 1.0f)), 0x01);
  CHECK_EQ(f32_to_fp8e4m3(3 * 0x1p-10f), 0x02);           // tie between subnormals 1 and 2
  CHECK_EQ(f32_to_fp8e4m3(7.5f * 0x1p-9f), 0x08);         // tie between the largest subnormal and 2^-6
  CHECK_EQ(f32_to_fp8e4m3(0x1p-6f), 0x08);
  CHECK_EQ(f32_to_fp8e4m3(1.0625f), 0x38);                // tie between 1 and 1.125: even
  CHECK_EQ(f32_to_fp8e4m3(1.1875f), 0x3A);                // tie between 1.125 and 1.25: even
  CHECK_EQ(f32_to_fp8e4m3(-0.0f), 0x80);
  CHECK_EQ(f32_to_fp8e4m3(1e-30f), 0x00);
  CHECK_EQ(f32_to_fp8e4m3(float_of(0x00000001u)), 0x00);
  for (float value : {416.0f, 432.0f, 447.9f, 448.1f, 463.9f, 464.1f, 0.3f, -17.0f}) check_fp8(value);
}

TEST(fp8_encode_midpoints_and_random) {
  check_midpoints(make_table(kFp8), check_fp8);
  check_random(0xF8E4A3, 4000000, -12, 10, check_fp8);
}

TEST(bulk_conversions_match_scalar) {
  std::mt19937 rng(7);
  const size_t count = 1031;  // not a multiple of any vector width
  std::vector<float> values(count);
  for (float& value : values) value = float_of(uint32_t(rng()));  // any bits: tiny, huge, inf, NaN
  std::vector<uint16_t> halves(count);
  std::vector<uint8_t> bytes(count);
  std::vector<float> back(count);

  convert_f32_to_bf16(values.data(), halves.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(halves[i], f32_to_bf16(values[i]));
  convert_bf16_to_f32(halves.data(), back.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(bits_of(back[i]), bits_of(bf16_to_f32(halves[i])));

  convert_f32_to_f16(values.data(), halves.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(halves[i], f32_to_f16(values[i]));
  convert_f16_to_f32(halves.data(), back.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(bits_of(back[i]), bits_of(f16_to_f32(halves[i])));

  convert_f32_to_fp8e4m3(values.data(), bytes.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(bytes[i], f32_to_fp8e4m3(values[i]));
  convert_fp8e4m3_to_f32(bytes.data(), back.data(), count);
  for (size_t i = 0; i < count; i++) CHECK_EQ(bits_of(back[i]), bits_of(fp8e4m3_to_f32(bytes[i])));
}
