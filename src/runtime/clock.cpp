#include "brick/runtime/clock.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {
namespace {

class SteadyClock final : public Clock {
 public:
  time_point now() const noexcept override {
    return std::chrono::time_point_cast<duration>(std::chrono::steady_clock::now());
  }

  bool sleep_until(time_point deadline, std::stop_token stop) override {
    std::mutex mutex;
    std::condition_variable_any wakeup;
    std::unique_lock lock(mutex);
    // Nothing notifies `wakeup`: the wait ends at the deadline or when `stop` is requested.
    wakeup.wait_until(lock, stop, deadline, [] { return false; });
    return now() >= deadline;
  }
};

}  // namespace

Clock& steady_clock() noexcept {
  static SteadyClock clock;
  return clock;
}

ManualClock::ManualClock(time_point start) noexcept : now_(start) {}

Clock::time_point ManualClock::now() const noexcept { return now_.load(); }

bool ManualClock::sleep_until(time_point deadline, std::stop_token stop) {
  std::unique_lock lock(mutex_);
  const auto registered = sleeper_deadlines_.insert(deadline);
  changed_.notify_all();
  const bool reached = changed_.wait(lock, stop, [&] { return now_.load() >= deadline; });
  sleeper_deadlines_.erase(registered);
  changed_.notify_all();
  return reached;
}

void ManualClock::advance(duration by) {
  if (by < duration::zero()) {
    throw InvalidArgument(fmt::format("ManualClock::advance: a monotonic clock cannot go back ({} ns)",
                                      by.count()));
  }
  {
    std::lock_guard lock(mutex_);
    const time_point now = now_.load();
    if (by > time_point::max() - now) {
      throw InvalidArgument(fmt::format("ManualClock::advance: {} ns from {} ns passes the last time point", by.count(),
                                        now.time_since_epoch().count()));
    }
    now_.store(now + by);
  }
  changed_.notify_all();
}

void ManualClock::advance_to(time_point to) {
  {
    std::lock_guard lock(mutex_);
    const time_point now = now_.load();
    if (to < now) {
      throw InvalidArgument(fmt::format(
          "ManualClock::advance_to: a monotonic clock cannot go back ({} ns before now)",
          (now - to).count()));
    }
    now_.store(to);
  }
  changed_.notify_all();
}

std::size_t ManualClock::sleepers() const {
  std::lock_guard lock(mutex_);
  return sleeper_deadlines_.size();
}

std::optional<Clock::time_point> ManualClock::earliest_sleeper_deadline() const {
  std::lock_guard lock(mutex_);
  if (sleeper_deadlines_.empty()) return std::nullopt;
  return *sleeper_deadlines_.begin();
}

void ManualClock::wait_for_sleepers(std::size_t count) const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return sleeper_deadlines_.size() >= count; });
}

}  // namespace brick
