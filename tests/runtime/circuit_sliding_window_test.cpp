#include "brick/runtime/circuit/sliding_window.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

using namespace std::chrono_literals;

struct Call {
  CallOutcome outcome;
  std::chrono::nanoseconds duration;
  Clock::time_point at;
};

CallAggregate sum(const std::vector<Call>& calls, std::size_t first) {
  CallAggregate total;
  for (std::size_t i = first; i < calls.size(); ++i) total.add(calls[i].outcome, calls[i].duration);
  return total;
}

TEST(SlidingWindow, CountBasedKeepsTheLastNCalls) {
  SlidingWindow window(SlidingWindowType::CountBased, 3);
  const Clock::time_point t{};
  window.record(CallOutcome::Failure, 1ms, t);
  window.record(CallOutcome::SlowFailure, 2ms, t);
  window.record(CallOutcome::Success, 3ms, t);
  CallAggregate totals = window.record(CallOutcome::SlowSuccess, 4ms, t);
  EXPECT_EQ(totals.calls, 3u);
  EXPECT_EQ(totals.failed_calls, 1u);
  EXPECT_EQ(totals.slow_calls, 2u);
  EXPECT_EQ(totals.slow_failed_calls, 1u);
  EXPECT_EQ(totals.total_duration, 9ms);
  EXPECT_EQ(window.snapshot(t + 1h), totals) << "a count-based window ignores time";
}

TEST(SlidingWindow, TimeBasedKeepsTheCurrentSecondAndTheOnesBefore) {
  SlidingWindow window(SlidingWindowType::TimeBased, 3);
  window.record(CallOutcome::Failure, 1ms, Clock::time_point{0s});
  window.record(CallOutcome::Success, 1ms, Clock::time_point{1500ms});
  EXPECT_EQ(window.snapshot(Clock::time_point{2999ms}).calls, 2u);
  EXPECT_EQ(window.snapshot(Clock::time_point{3s}).calls, 1u);
  EXPECT_EQ(window.snapshot(Clock::time_point{3s}).failed_calls, 0u);
  EXPECT_EQ(window.snapshot(Clock::time_point{4s}).calls, 0u);
  EXPECT_EQ(window.record(CallOutcome::Failure, 1ms, Clock::time_point{1h}).calls, 1u);
}

TEST(SlidingWindow, SizesOutsideOneToTheMaximumAreRejected) {
  EXPECT_THROW(SlidingWindow(SlidingWindowType::CountBased, 0), InvalidArgument);
  EXPECT_THROW(SlidingWindow(SlidingWindowType::TimeBased, 0), InvalidArgument);
  EXPECT_THROW(SlidingWindow(SlidingWindowType::CountBased, SlidingWindow::kMaxSize + 1), InvalidArgument);
  EXPECT_THROW(SlidingWindow(SlidingWindowType::TimeBased, UINT32_MAX), InvalidArgument);
  EXPECT_EQ(SlidingWindow(SlidingWindowType::TimeBased, SlidingWindow::kMaxSize).size(), SlidingWindow::kMaxSize);
  EXPECT_THROW(SlidingWindow(static_cast<SlidingWindowType>(7), 4), InvalidArgument);
}

TEST(SlidingWindowProperty, TotalsMatchARecountOfTheCallsInsideTheWindow) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 30; ++trial) {
    const auto size = std::uniform_int_distribution<std::uint32_t>(1, 12)(rng);
    SlidingWindow by_count(SlidingWindowType::CountBased, size);
    SlidingWindow by_time(SlidingWindowType::TimeBased, size);
    std::vector<Call> calls;
    Clock::time_point now{std::chrono::seconds(trial * 1000)};
    for (int step = 0; step < 500; ++step) {
      // Mostly sub-second steps, now and then a jump past the whole window.
      const auto gap = std::uniform_int_distribution<int>(0, 9)(rng) == 0
                           ? std::chrono::nanoseconds(std::chrono::seconds(size + 3))
                           : std::chrono::nanoseconds(
                                 std::uniform_int_distribution<std::int64_t>(0, 700'000'000)(rng));
      now += gap;
      const Call call{static_cast<CallOutcome>(std::uniform_int_distribution<int>(0, 3)(rng)),
                      std::chrono::nanoseconds(std::uniform_int_distribution<int>(0, 999)(rng)), now};
      calls.push_back(call);
      const CallAggregate counted = by_count.record(call.outcome, call.duration, call.at);
      ASSERT_EQ(counted, sum(calls, calls.size() > size ? calls.size() - size : 0)) << step;

      const CallAggregate timed = by_time.record(call.outcome, call.duration, call.at);
      const auto second = [](Clock::time_point t) {
        return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
      };
      std::size_t first = calls.size();
      while (first > 0 && second(calls[first - 1].at) > second(now) - size) --first;
      ASSERT_EQ(timed, sum(calls, first)) << step;
    }
  }
}

}  // namespace
}  // namespace brick
