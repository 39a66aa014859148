// cpu_features.cpp: cpuid/xgetbv decoding into CpuInfo and the S3_SIMD cap. Bit positions are
// from the Intel SDM, volume 2, "CPUID" (leaf 1 ECX, leaf 7 subleaf 0 EBX/ECX/EDX, leaf 7
// subleaf 1 EAX) and volume 1, "XCR0" (state components).
#include "core/cpu_features.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define S3_X86 1
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define S3_LINUX_X86_64 1
#endif

namespace s3 {

namespace {

struct LevelName {
  SimdLevel level;
  const char* name;
};

constexpr LevelName kLevelNames[] = {
    {SimdLevel::Scalar, "scalar"},
    {SimdLevel::Avx2, "avx2"},
    {SimdLevel::Avx512, "avx512"},
    {SimdLevel::Avx512Bf16, "avx512bf16"},
    {SimdLevel::Amx, "amx"},
};

bool bit(uint32_t reg, int index) { return (reg >> index) & 1u; }

#ifdef S3_X86
struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs regs;
  __cpuid_count(leaf, subleaf, regs.eax, regs.ebx, regs.ecx, regs.edx);
  return regs;
}

uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

std::string read_brand() {
  if (cpuid(0x80000000u, 0).eax < 0x80000004u) return "";
  char brand[49] = {};
  for (uint32_t i = 0; i < 3; i++) {
    CpuidRegs regs = cpuid(0x80000002u + i, 0);
    std::memcpy(brand + 16 * i + 0, &regs.eax, 4);
    std::memcpy(brand + 16 * i + 4, &regs.ebx, 4);
    std::memcpy(brand + 16 * i + 8, &regs.ecx, 4);
    std::memcpy(brand + 16 * i + 12, &regs.edx, 4);
  }
  std::string text(brand);
  size_t first = text.find_first_not_of(' ');
  size_t last = text.find_last_not_of(' ');
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

void detect_x86(CpuInfo& info) {
  info.brand = read_brand();
  uint32_t max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 1) return;
  CpuidRegs leaf1 = cpuid(1, 0);
  // Without OSXSAVE the OS manages no extended state, and xgetbv itself would fault.
  if (!bit(leaf1.ecx, 27)) return;
  uint64_t xcr0 = read_xcr0();
  bool os_ymm = (xcr0 & 0x6) == 0x6;     // SSE (1) and AVX (2) state
  bool os_zmm = (xcr0 & 0xE6) == 0xE6;   // plus opmask (5), ZMM_Hi256 (6), Hi16_ZMM (7)
  bool os_amx = (xcr0 & 0x60000) == 0x60000;  // XTILECFG (17) and XTILEDATA (18)
  bool avx = bit(leaf1.ecx, 28) && os_ymm;
  info.fma = avx && bit(leaf1.ecx, 12);
  info.f16c = avx && bit(leaf1.ecx, 29);
  if (max_leaf < 7) return;
  CpuidRegs leaf7 = cpuid(7, 0);
  info.avx2 = avx && bit(leaf7.ebx, 5);
  info.avx512f = os_zmm && bit(leaf7.ebx, 16);
  info.avx512dq = info.avx512f && bit(leaf7.ebx, 17);
  info.avx512bw = info.avx512f && bit(leaf7.ebx, 30);
  info.avx512vl = info.avx512f && bit(leaf7.ebx, 31);
  info.avx512vnni = info.avx512f && bit(leaf7.ecx, 11);
  info.avx512fp16 = info.avx512f && bit(leaf7.edx, 23);
  info.amx_bf16 = os_amx && bit(leaf7.edx, 22);
  info.amx_tile = os_amx && bit(leaf7.edx, 24);
  info.amx_int8 = os_amx && bit(leaf7.edx, 25);
  if (leaf7.eax >= 1) info.avx512bf16 = info.avx512f && bit(cpuid(7, 1).eax, 5);
}

// Linux's AMX permission protocol (arch/x86/include/uapi/asm/prctl.h, since 5.16): tile data is a
// dynamically enabled state component, usable by a process only after it asks; the grant covers
// every thread of the process, present and future. Asked once per detection; asking again after a
// grant is a no-op.
bool request_amx_permission() {
#ifdef S3_LINUX_X86_64
  constexpr long kArchGetXcompPerm = 0x1022;
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr unsigned long kXfeatureXtiledata = 18;
  unsigned long permitted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) != 0) return false;
  if (permitted & (1ul << kXfeatureXtiledata)) return true;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) != 0) return false;
  return (permitted & (1ul << kXfeatureXtiledata)) != 0;
#else
  return false;
#endif
}
#endif

SimdLevel supported_simd_level(const CpuInfo& info) {
  if (!(info.avx2 && info.fma && info.f16c)) return SimdLevel::Scalar;
  if (!(info.avx512f && info.avx512bw && info.avx512vl && info.avx512dq)) return SimdLevel::Avx2;
  if (!info.avx512bf16) return SimdLevel::Avx512;
  if (!(info.amx_tile && info.amx_bf16 && info.amx_permitted)) return SimdLevel::Avx512Bf16;
  return SimdLevel::Amx;
}

}  // namespace

const char* simd_level_name(SimdLevel level) {
  for (const LevelName& entry : kLevelNames) {
    if (entry.level == level) return entry.name;
  }
  return "scalar";  // unreachable: kLevelNames lists every enumerator
}

std::optional<SimdLevel> parse_simd_level(std::string_view name) {
  for (const LevelName& entry : kLevelNames) {
    if (name == entry.name) return entry.level;
  }
  return std::nullopt;
}

CpuInfo detect_cpu_info(const char* simd_cap) {
  CpuInfo info;
#ifdef S3_X86
  detect_x86(info);
  if (info.amx_tile && info.amx_bf16) info.amx_permitted = request_amx_permission();
#endif
  info.supported_level = supported_simd_level(info);
  info.level = info.supported_level;
  if (simd_cap != nullptr && simd_cap[0] != '\0') {
    std::optional<SimdLevel> cap = parse_simd_level(simd_cap);
    if (!cap) {
      throw std::invalid_argument(std::string("S3_SIMD='") + simd_cap +
                                  "' is not a SIMD level; use scalar, avx2, avx512, avx512bf16 or amx, or unset it");
    }
    if (*cap < info.level) info.level = *cap;
  }
  return info;
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect_cpu_info(std::getenv("S3_SIMD"));
  return info;
}

}  // namespace s3
