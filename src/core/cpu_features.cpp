#include "brick/core/cpu_features.hpp"

#include <cpuid.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "brick/core/error.hpp"

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

// Every feature with the name describe() gives it, in describe()'s order.
std::array<std::pair<bool CpuFeatures::*, std::string_view>, 17> named_features() {
  return {{
      {&CpuFeatures::sse42, "sse4.2"},
      {&CpuFeatures::avx, "avx"},
      {&CpuFeatures::avx2, "avx2"},
      {&CpuFeatures::fma, "fma"},
      {&CpuFeatures::f16c, "f16c"},
      {&CpuFeatures::avx512f, "avx512f"},
      {&CpuFeatures::avx512bw, "avx512bw"},
      {&CpuFeatures::avx512dq, "avx512dq"},
      {&CpuFeatures::avx512vl, "avx512vl"},
      {&CpuFeatures::avx512vnni, "avx512vnni"},
      {&CpuFeatures::avx512bf16, "avx512bf16"},
      {&CpuFeatures::gfni, "gfni"},
      {&CpuFeatures::avxvnni, "avxvnni"},
      {&CpuFeatures::amx_tile, "amx-tile"},
      {&CpuFeatures::amx_int8, "amx-int8"},
      {&CpuFeatures::amx_bf16, "amx-bf16"},
      {&CpuFeatures::invariant_tsc, "invariant-tsc"},
  }};
}

// Turns off every feature that builds on one that is off.
void drop_dependents(CpuFeatures& f) {
  f.avx2 = f.avx2 && f.avx;
  f.fma = f.fma && f.avx;
  f.f16c = f.f16c && f.avx;
  f.avxvnni = f.avxvnni && f.avx2;
  f.avx512f = f.avx512f && f.avx2;
  for (bool CpuFeatures::*member : {&CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
                                    &CpuFeatures::avx512vnni, &CpuFeatures::avx512bf16}) {
    f.*member = f.*member && f.avx512f;
  }
  f.amx_int8 = f.amx_int8 && f.amx_tile;
  f.amx_bf16 = f.amx_bf16 && f.amx_tile;
}

}  // namespace

CpuFeatures without_features(CpuFeatures features, std::string_view names) {
  const auto features_by_name = named_features();
  std::size_t at = 0;
  while (at < names.size()) {
    const std::size_t end = std::min(names.find_first_of(", ", at), names.size());
    const std::string_view name = names.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    const auto* found = std::find_if(features_by_name.begin(), features_by_name.end(),
                                     [&](const auto& entry) { return entry.second == name; });
    if (found == features_by_name.end()) {
      std::string known;
      for (const auto& entry : features_by_name) known += fmt::format("{}{}", known.empty() ? "" : ", ", entry.second);
      throw InvalidArgument(fmt::format("'{}' is not a CPU feature; the features are {}", name, known));
    }
    features.*(found->first) = false;
  }
  drop_dependents(features);
  return features;
}

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
  static const CpuFeatures features = [] {
    const char* disabled = std::getenv("BRICK_CPU_DISABLE");
    try {
      return without_features(detect_cpu_features(), disabled == nullptr ? "" : disabled);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("BRICK_CPU_DISABLE: {}", e.what()));
    }
  }();
  return features;
}

std::string describe(const CpuFeatures& f) {
  std::string out;
  for (const auto& [member, label] : named_features()) {
    if (!(f.*member)) continue;
    if (!out.empty()) out += ' ';
    out += label;
  }
  return out.empty() ? "none" : out;
}

}  // namespace brick
