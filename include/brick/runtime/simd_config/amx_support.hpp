#pragma once
// Whether this process may execute AMX instructions, and why not. Three checks, in order:
//   1. the CPU reports AMX-TILE (CPUID.(EAX=7,ECX=0):EDX[24]);
//   2. the OS enables tile state in XCR0 (bits 17 XTILECFG and 18 XTILEDATA);
//   3. Linux grants this process the tile data state: arch_prctl(ARCH_REQ_XCOMP_PERM, 18).
// The permission request runs only when 1 and 2 pass; no AMX instruction runs unless all three do.
#include <functional>
#include <string>
#include <string_view>

#include "brick/runtime/simd_config/amx_tile_config.hpp"

namespace brick {

enum class AmxStatus { Usable, CpuLacksAmx, OsLacksTileState, PermissionDenied };

std::string_view name(AmxStatus status) noexcept;

struct AmxSupport {
  AmxStatus status = AmxStatus::CpuLacksAmx;
  std::string reason;  // why AMX is unusable; empty when usable
  bool int8 = false;   // AMX-INT8 (TDPBSSD & co.) reported
  bool bf16 = false;   // AMX-BF16 (TDPBF16PS) reported

  bool usable() const noexcept { return status == AmxStatus::Usable; }
};

// What CPUID and XCR0 say, before asking the OS for permission.
struct AmxProbe {
  bool cpu_has_amx_tile = false;
  bool os_has_tile_state = false;
  bool int8 = false;
  bool bf16 = false;
};

// Reads the probe from CPUID and XGETBV.
AmxProbe probe_amx();

// Asks Linux for the tile data state; returns 0 when granted, else the errno value.
int request_amx_permission() noexcept;

// The decision for a probe; `request_permission` (0 or an errno value) is called only when the CPU
// and XCR0 checks pass. Reasons: "CPU lacks AMX-TILE", "OS has not enabled tile state in XCR0",
// "arch_prctl denied: <errno text>".
AmxSupport evaluate_amx_support(const AmxProbe& probe, const std::function<int()>& request_permission);

// evaluate_amx_support(probe_amx(), request_amx_permission), done once per process.
const AmxSupport& amx_support();

// "yes (int8 bf16)" or "no: <reason>", for reports.
std::string describe(const AmxSupport& support);

// Tile state configured for the calling thread while the object lives: validates `config`, throws
// BackendUnavailable (with the reason) unless amx_support() is usable, then loads the
// configuration; the destructor releases the tiles. Tile configuration is per thread, so the object
// must be destroyed on the thread that made it.
class ScopedTileConfig {
 public:
  explicit ScopedTileConfig(const AmxTileConfig& config);
  ScopedTileConfig(const ScopedTileConfig&) = delete;
  ScopedTileConfig& operator=(const ScopedTileConfig&) = delete;
  ~ScopedTileConfig();

  // The configuration the CPU holds now (STTILECFG).
  AmxTileConfig stored() const;
};

}  // namespace brick
