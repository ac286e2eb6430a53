#pragma once
// The call statistics a circuit breaker decides on, as resilience4j keeps them: either the outcomes
// of the last N calls (count-based) or of the calls made in the last N seconds (time-based, one
// aggregate per clock second: the current, partial second and the N-1 before it).
// Not thread-safe: the owner (CircuitBreaker) serialises access.
#include <chrono>
#include <cstdint>
#include <vector>

#include "brick/runtime/clock.hpp"

namespace brick {

enum class SlidingWindowType : std::uint8_t { CountBased, TimeBased };

enum class CallOutcome : std::uint8_t { Success, Failure, SlowSuccess, SlowFailure };

struct CallAggregate {
  std::uint32_t calls = 0;
  std::uint32_t failed_calls = 0;
  std::uint32_t slow_calls = 0;
  std::uint32_t slow_failed_calls = 0;
  std::chrono::nanoseconds total_duration{0};

  void add(CallOutcome outcome, std::chrono::nanoseconds duration) noexcept;
  void add(const CallAggregate& other) noexcept;
  void subtract(const CallAggregate& other) noexcept;
  friend bool operator==(const CallAggregate&, const CallAggregate&) = default;
};

class SlidingWindow {
 public:
  // The largest size: a window keeps one CallAggregate (24 bytes) per call or second, allocated up
  // front, so this bounds one window to 24 MiB.
  static constexpr std::uint32_t kMaxSize = std::uint32_t{1} << 20;

  // `size` is a number of calls (count-based) or of seconds (time-based), in 1..kMaxSize; throws
  // InvalidArgument otherwise, or for a `type` outside the enum.
  SlidingWindow(SlidingWindowType type, std::uint32_t size);

  SlidingWindowType type() const noexcept { return type_; }
  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }

  // Records one call that ended at `now` and returns the totals over the window, this call included.
  CallAggregate record(CallOutcome outcome, std::chrono::nanoseconds duration, Clock::time_point now);
  // The totals over the window as seen at `now` (a time-based window drops expired seconds first).
  CallAggregate snapshot(Clock::time_point now);

 private:
  std::size_t slot_of(std::int64_t second) const noexcept;
  void slide_to(std::int64_t second) noexcept;

  SlidingWindowType type_;
  // Count-based: one slot per call, written round-robin. Time-based: slot (second mod size) holds
  // the aggregate of that second; slide_to clears a slot before a new second reuses it.
  std::vector<CallAggregate> slots_;
  std::size_t next_slot_ = 0;
  std::int64_t latest_second_ = 0;
  CallAggregate total_;
};

}  // namespace brick
