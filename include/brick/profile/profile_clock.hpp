#pragma once
// Where the profiler's timestamps come from. The TSC is read with one instruction and converted to
// nanoseconds with a calibration measured once per process; it is only used when the CPU reports an
// invariant TSC (constant rate across frequency and power states). Otherwise steady_clock is used.
// An injected brick::Clock (runtime/clock.hpp) lets tests and replays drive time by hand.
#include <x86intrin.h>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace brick {

enum class ClockSource : std::uint8_t {
  Tsc,          // rdtsc, calibrated to ns
  SteadyClock,  // std::chrono::steady_clock, already in ns
  Manual,       // a brick::Clock owned by the caller, e.g. a ManualClock (tests, replay)
};

std::string_view name(ClockSource source) noexcept;

// Tsc when brick::cpu_features().invariant_tsc, SteadyClock otherwise.
ClockSource default_clock_source() noexcept;

// Nanoseconds per TSC tick, measured against steady_clock over ~10 ms on first call.
double tsc_ns_per_tick();

// Converts tick differences to ns with one 64x64->128 multiply: ns = ticks * scale / 2^32.
class TickConverter {
 public:
  explicit TickConverter(double ns_per_tick = 1.0) noexcept;

  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    __extension__ using Wide = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<Wide>(ticks) * scale_) >> 32);
  }
  double ns_per_tick() const noexcept { return static_cast<double>(scale_) / 4294967296.0; }

 private:
  std::uint64_t scale_;
};

inline std::uint64_t read_steady_clock_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace brick
