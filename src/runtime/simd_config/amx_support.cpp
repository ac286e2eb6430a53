#include "brick/runtime/simd_config/amx_support.hpp"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"
#include "runtime/os_error.hpp"
#include "runtime/simd_config/tile_config_amx.hpp"

namespace brick {
namespace {

// From <asm/prctl.h> and the x86 XSAVE component numbering; spelled out because older libc headers
// lack them.
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

bool cpuid_reports_amx_tile() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return ((edx >> 24) & 1u) != 0;
}

}  // namespace

std::string_view name(AmxStatus status) noexcept {
  switch (status) {
    case AmxStatus::Usable: return "usable";
    case AmxStatus::CpuLacksAmx: return "cpu-lacks-amx";
    case AmxStatus::OsLacksTileState: return "os-lacks-tile-state";
    case AmxStatus::PermissionDenied: return "permission-denied";
  }
  return "unknown";
}

AmxProbe probe_amx() {
  // cpu_features() counts AMX only when both CPUID and XCR0 agree; the raw CPUID bit tells the two
  // causes of its absence apart.
  const CpuFeatures& features = cpu_features();
  AmxProbe probe;
  probe.cpu_has_amx_tile = cpuid_reports_amx_tile();
  probe.os_has_tile_state = features.amx_tile;
  probe.int8 = features.amx_int8;
  probe.bf16 = features.amx_bf16;
  return probe;
}

int request_amx_permission() noexcept {
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0) return 0;
  return errno;
}

AmxSupport evaluate_amx_support(const AmxProbe& probe, const std::function<int()>& request_permission) {
  AmxSupport support;
  if (!probe.cpu_has_amx_tile) {
    support.status = AmxStatus::CpuLacksAmx;
    support.reason = "CPU lacks AMX-TILE";
    return support;
  }
  if (!probe.os_has_tile_state) {
    support.status = AmxStatus::OsLacksTileState;
    support.reason = "OS has not enabled tile state in XCR0";
    return support;
  }
  if (const int error = request_permission(); error != 0) {
    support.status = AmxStatus::PermissionDenied;
    support.reason = "arch_prctl denied: " + detail::errno_text(error);
    return support;
  }
  support.status = AmxStatus::Usable;
  support.int8 = probe.int8;
  support.bf16 = probe.bf16;
  return support;
}

const AmxSupport& amx_support() {
  static const AmxSupport support = evaluate_amx_support(probe_amx(), request_amx_permission);
  return support;
}

std::string describe(const AmxSupport& support) {
  if (!support.usable()) return "no: " + support.reason;
  std::string kinds;
  if (support.int8) kinds += "int8";
  if (support.bf16) kinds += kinds.empty() ? "bf16" : " bf16";
  return kinds.empty() ? "yes" : fmt::format("yes ({})", kinds);
}

ScopedTileConfig::ScopedTileConfig(const AmxTileConfig& config) {
  validate_tile_config(config);
  const AmxSupport& support = amx_support();
  if (!support.usable()) throw BackendUnavailable("amx", "usable AMX tiles (" + support.reason + ")");
  detail::load_tile_config_amx(&config);
}

ScopedTileConfig::~ScopedTileConfig() { detail::release_tiles_amx(); }

AmxTileConfig ScopedTileConfig::stored() const {
  AmxTileConfig config;
  detail::store_tile_config_amx(&config);
  return config;
}

}  // namespace brick
