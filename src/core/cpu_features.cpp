#include "brick/core/cpu_features.hpp"

#include <cpuid.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace brick {
namespace {

struct Regs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(std::uint32_t leaf, std::uint32_t subleaf = 0) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

// XGETBV is only legal when CPUID reports OSXSAVE; the caller checks that first.
std::uint64_t xgetbv0() {
  std::uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (std::uint64_t{edx} << 32) | eax;
}

bool bit(std::uint32_t value, int index) {
  return ((value >> index) & 1u) != 0;
}

// XCR0 state components the OS must enable before the matching registers may be used.
constexpr std::uint64_t kXcr0SseAvx = 0x6;   // XMM (bit 1) + YMM (bit 2)
constexpr std::uint64_t kXcr0Avx512 = 0xE0;  // opmask, ZMM_Hi256, Hi16_ZMM (bits 5-7)
constexpr std::uint64_t kXcr0Amx = (1ull << 17) | (1ull << 18);  // XTILECFG + XTILEDATA

}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  const Regs leaf0 = cpuid(0);
  const std::uint32_t max_leaf = leaf0.eax;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  f.vendor = vendor;

  if (max_leaf >= 1) {
    const Regs leaf1 = cpuid(1);
    const bool osxsave = bit(leaf1.ecx, 27);
    const std::uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    const bool os_avx = (xcr0 & kXcr0SseAvx) == kXcr0SseAvx;
    const bool os_avx512 = os_avx && (xcr0 & kXcr0Avx512) == kXcr0Avx512;
    const bool os_amx = (xcr0 & kXcr0Amx) == kXcr0Amx;

    f.sse42 = bit(leaf1.ecx, 20);
    f.avx = os_avx && bit(leaf1.ecx, 28);
    f.fma = f.avx && bit(leaf1.ecx, 12);
    f.f16c = f.avx && bit(leaf1.ecx, 29);

    if (max_leaf >= 7) {
      const Regs leaf7 = cpuid(7, 0);
      f.avx2 = f.avx && bit(leaf7.ebx, 5);
      f.avx512f = os_avx512 && bit(leaf7.ebx, 16);
      f.avx512dq = f.avx512f && bit(leaf7.ebx, 17);
      f.avx512bw = f.avx512f && bit(leaf7.ebx, 30);
      f.avx512vl = f.avx512f && bit(leaf7.ebx, 31);
      f.avx512vnni = f.avx512f && bit(leaf7.ecx, 11);
      f.gfni = f.avx && bit(leaf7.ecx, 8);
      f.amx_bf16 = os_amx && bit(leaf7.edx, 22);
      f.amx_tile = os_amx && bit(leaf7.edx, 24);
      f.amx_int8 = os_amx && bit(leaf7.edx, 25);
      if (leaf7.eax >= 1) {
        const Regs leaf7_1 = cpuid(7, 1);
        f.avxvnni = f.avx2 && bit(leaf7_1.eax, 4);
        f.avx512bf16 = f.avx512f && bit(leaf7_1.eax, 5);
      }
    }
  }

  const std::uint32_t max_extended = cpuid(0x80000000u).eax;
  if (max_extended >= 0x80000004u) {
    std::array<char, 49> brand{};
    for (std::uint32_t i = 0; i < 3; ++i) {
      const Regs r = cpuid(0x80000002u + i);
      std::memcpy(brand.data() + 16 * i + 0, &r.eax, 4);
      std::memcpy(brand.data() + 16 * i + 4, &r.ebx, 4);
      std::memcpy(brand.data() + 16 * i + 8, &r.ecx, 4);
      std::memcpy(brand.data() + 16 * i + 12, &r.edx, 4);
    }
    f.brand = brand.data();
    const auto first = f.brand.find_first_not_of(' ');
    f.brand.erase(0, first == std::string::npos ? f.brand.size() : first);
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  }
  if (max_extended >= 0x80000007u) f.invariant_tsc = bit(cpuid(0x80000007u).edx, 8);
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect_cpu_features();
  return features;
}

std::string describe(const CpuFeatures& f) {
  const std::pair<bool, const char*> flags[] = {
      {f.sse42, "sse4.2"},
      {f.avx, "avx"},
      {f.avx2, "avx2"},
      {f.fma, "fma"},
      {f.f16c, "f16c"},
      {f.avx512f, "avx512f"},
      {f.avx512bw, "avx512bw"},
      {f.avx512dq, "avx512dq"},
      {f.avx512vl, "avx512vl"},
      {f.avx512vnni, "avx512vnni"},
      {f.avx512bf16, "avx512bf16"},
      {f.gfni, "gfni"},
      {f.avxvnni, "avxvnni"},
      {f.amx_tile, "amx-tile"},
      {f.amx_int8, "amx-int8"},
      {f.amx_bf16, "amx-bf16"},
      {f.invariant_tsc, "invariant-tsc"},
  };
  std::string out;
  for (const auto& [present, label] : flags) {
    if (!present) continue;
    if (!out.empty()) out += ' ';
    out += label;
  }
  return out.empty() ? "none" : out;
}

}  // namespace brick
