// test_core_cpu_features.cpp: detected features are mutually consistent, agree with what the kernel
// reports in /proc/cpuinfo (on Linux x86), and S3_SIMD caps the dispatch level.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/cpu_features.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

// The "flags" line of the first processor in /proc/cpuinfo, or an empty set.
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream file("/proc/cpuinfo");
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string word; words >> word;) flags.insert(word);
      return flags;
    }
  }
  return {};
}

}  // namespace

TEST(cpu_features_are_consistent) {
  const CpuInfo& info = cpu_info();
  std::printf("  cpu: %s; level %s (supports %s)\n", info.brand.c_str(), simd_level_name(info.level),
              simd_level_name(info.supported_level));
  if (info.avx512bw || info.avx512vl || info.avx512dq || info.avx512bf16 || info.avx512fp16 || info.avx512vnni) {
    CHECK(info.avx512f);
  }
  CHECK(info.level <= info.supported_level);
  if (info.supported_level >= SimdLevel::Avx2) CHECK(info.avx2 && info.fma && info.f16c);
  if (info.supported_level >= SimdLevel::Avx512) CHECK(info.avx512f && info.avx512bw && info.avx512vl && info.avx512dq);
  if (info.supported_level >= SimdLevel::Avx512Bf16) CHECK(info.avx512bf16);
  if (info.supported_level >= SimdLevel::Amx) CHECK(info.amx_tile && info.amx_bf16 && info.amx_permitted);
  if (info.amx_permitted) CHECK(info.amx_tile);
  // A CPU with every AMX-level feature and the kernel's grant runs the amx level.
  if (info.avx512bf16 && info.amx_tile && info.amx_bf16 && info.amx_permitted) CHECK(info.supported_level == SimdLevel::Amx);
  if (info.avx2 && info.fma && info.f16c && info.supported_level == SimdLevel::Scalar) CHECK(false);
}

TEST(cpu_features_match_proc_cpuinfo) {
#if defined(__x86_64__) && defined(__linux__)
  std::set<std::string> flags = proc_cpuinfo_flags();
  if (flags.empty()) SKIP("no flags line in /proc/cpuinfo");
  const CpuInfo& info = cpu_info();
  // The kernel hides flags whose register state it does not enable, as our XCR0 check does.
  // Long-known flags must agree both ways; newer ones only one way, since an older kernel may
  // not know a flag the CPU has.
  CHECK_EQ(info.avx2, flags.count("avx2") == 1);
  CHECK_EQ(info.fma, flags.count("fma") == 1);
  CHECK_EQ(info.f16c, flags.count("f16c") == 1);
  CHECK_EQ(info.avx512f, flags.count("avx512f") == 1);
  CHECK_EQ(info.avx512bw, flags.count("avx512bw") == 1);
  CHECK_EQ(info.avx512vl, flags.count("avx512vl") == 1);
  CHECK_EQ(info.avx512dq, flags.count("avx512dq") == 1);
  if (flags.count("avx512_bf16")) CHECK(info.avx512bf16);
  if (flags.count("avx512_fp16")) CHECK(info.avx512fp16);
  if (flags.count("avx512_vnni")) CHECK(info.avx512vnni);
  if (flags.count("amx_tile")) CHECK(info.amx_tile);
  if (flags.count("amx_bf16")) CHECK(info.amx_bf16);
  if (flags.count("amx_int8")) CHECK(info.amx_int8);
  CHECK(!info.brand.empty());
#else
  SKIP("needs Linux on x86-64");
#endif
}

TEST(cpu_features_simd_cap) {
  SimdLevel supported = detect_cpu_info(nullptr).supported_level;
  CHECK(detect_cpu_info(nullptr).level == supported);
  CHECK(detect_cpu_info("").level == supported);
  CHECK(detect_cpu_info("scalar").level == SimdLevel::Scalar);
  for (SimdLevel cap : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Avx512Bf16, SimdLevel::Amx}) {
    CpuInfo capped = detect_cpu_info(simd_level_name(cap));
    CHECK(capped.level == (cap < supported ? cap : supported));  // a cap never raises the level
    CHECK(capped.supported_level == supported);
  }
  CHECK_THROWS(std::invalid_argument, detect_cpu_info("avx3"));
  CHECK_THROWS(std::invalid_argument, detect_cpu_info("AVX2"));
}

TEST(cpu_features_level_names_round_trip) {
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Avx512Bf16, SimdLevel::Amx}) {
    CHECK(parse_simd_level(simd_level_name(level)) == level);
  }
  CHECK(!parse_simd_level("sse4").has_value());
}
