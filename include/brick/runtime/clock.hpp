#pragma once
// Injectable monotonic time. The time-dependent runtime modules (circuit breaker, token bucket) read
// the time and sleep only through a Clock: production code passes the steady clock, tests drive a
// ManualClock by hand, so they are deterministic and never really sleep.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>

namespace brick {

class Clock {
 public:
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;

  Clock() = default;
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
  virtual ~Clock() = default;

  // Monotonic: never goes backwards. Thread-safe.
  virtual time_point now() const noexcept = 0;

  // Blocks until now() >= deadline (true) or until `stop` is requested first (false). Thread-safe.
  virtual bool sleep_until(time_point deadline, std::stop_token stop = {}) = 0;
};

// The process-wide std::chrono::steady_clock.
Clock& steady_clock() noexcept;

// A clock that moves only when told to. Threads sleeping on it wake when advance() reaches their
// deadline; a test can wait until a thread is asleep and read the deadline it asked for, so tests of
// blocking code stay deterministic.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(time_point start = time_point{}) noexcept;

  time_point now() const noexcept override;
  bool sleep_until(time_point deadline, std::stop_token stop = {}) override;

  // Both throw InvalidArgument when asked to go backwards; advance() also when it would pass
  // time_point::max() (the clock would wrap to the past).
  void advance(duration by);
  void advance_to(time_point to);

  // Number of threads blocked in sleep_until, and the earliest deadline among them.
  std::size_t sleepers() const;
  std::optional<time_point> earliest_sleeper_deadline() const;
  // Blocks until at least `count` threads are blocked in sleep_until.
  void wait_for_sleepers(std::size_t count) const;

 private:
  // now_ is written under mutex_ (so that sleepers cannot miss an advance) and read without it.
  std::atomic<time_point> now_;
  mutable std::mutex mutex_;
  mutable std::condition_variable_any changed_;
  std::multiset<time_point> sleeper_deadlines_;
};

}  // namespace brick
