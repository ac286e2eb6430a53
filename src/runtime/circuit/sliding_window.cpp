#include "brick/runtime/circuit/sliding_window.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "brick/core/error.hpp"

namespace brick {

void CallAggregate::add(CallOutcome outcome, std::chrono::nanoseconds duration) noexcept {
  ++calls;
  total_duration += duration;
  const bool failed = outcome == CallOutcome::Failure || outcome == CallOutcome::SlowFailure;
  const bool slow = outcome == CallOutcome::SlowSuccess || outcome == CallOutcome::SlowFailure;
  failed_calls += failed;
  slow_calls += slow;
  slow_failed_calls += failed && slow;
}

void CallAggregate::add(const CallAggregate& other) noexcept {
  calls += other.calls;
  failed_calls += other.failed_calls;
  slow_calls += other.slow_calls;
  slow_failed_calls += other.slow_failed_calls;
  total_duration += other.total_duration;
}

void CallAggregate::subtract(const CallAggregate& other) noexcept {
  calls -= other.calls;
  failed_calls -= other.failed_calls;
  slow_calls -= other.slow_calls;
  slow_failed_calls -= other.slow_failed_calls;
  total_duration -= other.total_duration;
}

namespace {

std::int64_t whole_seconds(Clock::time_point t) noexcept {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

SlidingWindow::SlidingWindow(SlidingWindowType type, std::uint32_t size) : type_(type) {
  if (type != SlidingWindowType::CountBased && type != SlidingWindowType::TimeBased) {
    throw InvalidArgument(fmt::format("SlidingWindow: {} is not a SlidingWindowType", static_cast<int>(type)));
  }
  if (size == 0 || size > kMaxSize) {
    throw InvalidArgument(fmt::format("SlidingWindow: the {} window size must be in 1..{}, got {}",
                                      type == SlidingWindowType::CountBased ? "count-based" : "time-based",
                                      kMaxSize, size));
  }
  slots_.resize(size);
}

std::size_t SlidingWindow::slot_of(std::int64_t second) const noexcept {
  const auto size = static_cast<std::int64_t>(slots_.size());
  return static_cast<std::size_t>(((second % size) + size) % size);
}

void SlidingWindow::slide_to(std::int64_t second) noexcept {
  if (second <= latest_second_) return;
  const auto size = static_cast<std::int64_t>(slots_.size());
  // Seconds that fall out of the window are those whose slot the new seconds reuse; beyond one full
  // turn every slot is stale, so at most `size` slots need clearing.
  const std::int64_t first = std::max(latest_second_ + 1, second - size + 1);
  for (std::int64_t s = first; s <= second; ++s) {
    CallAggregate& slot = slots_[slot_of(s)];
    total_.subtract(slot);
    slot = {};
  }
  latest_second_ = second;
}

CallAggregate SlidingWindow::record(CallOutcome outcome, std::chrono::nanoseconds duration,
                                    Clock::time_point now) {
  if (type_ == SlidingWindowType::CountBased) {
    CallAggregate& slot = slots_[next_slot_];
    total_.subtract(slot);
    slot = {};
    slot.add(outcome, duration);
    total_.add(slot);
    next_slot_ = (next_slot_ + 1) % slots_.size();
    return total_;
  }
  // A monotonic clock never goes back; were it to, the call lands in the latest second.
  const std::int64_t second = std::max(whole_seconds(now), latest_second_);
  slide_to(second);
  slots_[slot_of(second)].add(outcome, duration);
  total_.add(outcome, duration);
  return total_;
}

CallAggregate SlidingWindow::snapshot(Clock::time_point now) {
  if (type_ == SlidingWindowType::TimeBased) slide_to(whole_seconds(now));
  return total_;
}

}  // namespace brick
