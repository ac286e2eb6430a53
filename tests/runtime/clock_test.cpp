#include "brick/runtime/clock.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "brick/core/error.hpp"

namespace brick {
namespace {

using namespace std::chrono_literals;

TEST(ManualClock, MovesOnlyWhenAdvanced) {
  ManualClock clock(Clock::time_point{5s});
  EXPECT_EQ(clock.now(), Clock::time_point{5s});
  clock.advance(250ms);
  EXPECT_EQ(clock.now(), Clock::time_point{5250ms});
  clock.advance_to(Clock::time_point{7s});
  EXPECT_EQ(clock.now(), Clock::time_point{7s});
  clock.advance(0ns);
  EXPECT_EQ(clock.now(), Clock::time_point{7s});
}

TEST(ManualClock, RefusesToGoBack) {
  ManualClock clock(Clock::time_point{1s});
  EXPECT_THROW(clock.advance(-1ns), InvalidArgument);
  EXPECT_THROW(clock.advance_to(Clock::time_point{999ms}), InvalidArgument);
  EXPECT_EQ(clock.now(), Clock::time_point{1s});
}

// Advancing past the last time point used to wrap the clock to the distant past.
TEST(ManualClock, RefusesToPassTheLastTimePoint) {
  ManualClock clock(Clock::time_point::max() - 1ns);
  EXPECT_THROW(clock.advance(2ns), InvalidArgument);
  EXPECT_THROW(clock.advance(Clock::duration::max()), InvalidArgument);
  EXPECT_EQ(clock.now(), Clock::time_point::max() - 1ns);
  clock.advance(1ns);
  EXPECT_EQ(clock.now(), Clock::time_point::max());
}

TEST(ManualClock, SleepUntilThePastReturnsAtOnce) {
  ManualClock clock(Clock::time_point{1s});
  EXPECT_TRUE(clock.sleep_until(Clock::time_point{1s}));
  EXPECT_TRUE(clock.sleep_until(Clock::time_point{0s}));
  EXPECT_EQ(clock.sleepers(), 0u);
}

TEST(ManualClock, SleeperWakesWhenTheClockReachesItsDeadline) {
  ManualClock clock;
  bool reached = false;
  std::thread sleeper([&] { reached = clock.sleep_until(Clock::time_point{10s}); });
  clock.wait_for_sleepers(1);
  EXPECT_EQ(clock.earliest_sleeper_deadline(), Clock::time_point{10s});
  clock.advance(9s);
  // Still asleep: its deadline is still registered.
  EXPECT_EQ(clock.sleepers(), 1u);
  clock.advance(1s);
  sleeper.join();
  EXPECT_TRUE(reached);
  EXPECT_EQ(clock.sleepers(), 0u);
  EXPECT_FALSE(clock.earliest_sleeper_deadline().has_value());
}

TEST(ManualClock, StopRequestEndsTheSleepEarly) {
  ManualClock clock;
  std::stop_source stop;
  bool reached = true;
  std::thread sleeper([&] { reached = clock.sleep_until(Clock::time_point{1h}, stop.get_token()); });
  clock.wait_for_sleepers(1);
  stop.request_stop();
  sleeper.join();
  EXPECT_FALSE(reached);
  EXPECT_EQ(clock.now(), Clock::time_point{});
}

TEST(SteadyClock, IsMonotonicAndHonoursStop) {
  Clock& clock = steady_clock();
  const Clock::time_point a = clock.now();
  const Clock::time_point b = clock.now();
  EXPECT_LE(a, b);
  EXPECT_TRUE(clock.sleep_until(a));  // already past: no wait
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(clock.sleep_until(clock.now() + 1h, stop.get_token()));
}

}  // namespace
}  // namespace brick
