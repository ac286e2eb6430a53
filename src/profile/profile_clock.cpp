#include "brick/profile/profile_clock.hpp"

#include <cmath>

#include "brick/core/cpu_features.hpp"

namespace brick {
namespace {

constexpr std::uint64_t kCalibrationNs = 10'000'000;

double measure_tsc_ns_per_tick() {
  const std::uint64_t steady_begin = read_steady_clock_ns();
  const std::uint64_t tsc_begin = __rdtsc();
  std::uint64_t steady_end = steady_begin;
  while (steady_end - steady_begin < kCalibrationNs) steady_end = read_steady_clock_ns();
  const std::uint64_t tsc_end = __rdtsc();
  const std::uint64_t ticks = tsc_end - tsc_begin;
  return ticks == 0 ? 1.0 : static_cast<double>(steady_end - steady_begin) / static_cast<double>(ticks);
}

}  // namespace

std::string_view name(ClockSource source) noexcept {
  switch (source) {
    case ClockSource::Tsc: return "tsc";
    case ClockSource::SteadyClock: return "steady_clock";
    case ClockSource::Manual: break;
  }
  return "manual";
}

ClockSource default_clock_source() noexcept {
  return cpu_features().invariant_tsc ? ClockSource::Tsc : ClockSource::SteadyClock;
}

double tsc_ns_per_tick() {
  static const double ns_per_tick = measure_tsc_ns_per_tick();
  return ns_per_tick;
}

TickConverter::TickConverter(double ns_per_tick) noexcept
    : scale_(static_cast<std::uint64_t>(std::llround(ns_per_tick * 4294967296.0))) {}

}  // namespace brick
