#pragma once
// Where the profiler's timestamps come from. The TSC is read with one instruction and converted to
// nanoseconds with a calibration measured once per process; it is only used when the CPU reports an
// invariant TSC (constant rate across frequency and power states). Otherwise steady_clock is used.
// A ManualClock lets tests drive time by hand.
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace brick {

enum class ClockSource : std::uint8_t {
  Tsc,          // rdtsc, calibrated to ns
  SteadyClock,  // std::chrono::steady_clock, already in ns
  Manual,       // a ManualClock owned by the caller (tests, replay)
};

std::string_view name(ClockSource source) noexcept;

// Tsc when brick::cpu_features().invariant_tsc, SteadyClock otherwise.
ClockSource default_clock_source() noexcept;

// Nanoseconds per TSC tick, measured against steady_clock over ~10 ms on first call.
double tsc_ns_per_tick();

// A clock whose time (in ns) only moves when told to. Safe to use from any thread. It counts its
// reads, so tests can check that a disabled profiler never reads the clock.
class ManualClock {
 public:
  std::uint64_t now_ns() const noexcept {
    reads_.fetch_add(1, std::memory_order_relaxed);
    return ns_.load(std::memory_order_relaxed);
  }
  void set_ns(std::uint64_t ns) noexcept { ns_.store(ns, std::memory_order_relaxed); }
  void advance_ns(std::uint64_t ns) noexcept { ns_.fetch_add(ns, std::memory_order_relaxed); }
  std::uint64_t reads() const noexcept { return reads_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> ns_{0};
  mutable std::atomic<std::uint64_t> reads_{0};
};

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
