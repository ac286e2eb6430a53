#include "brick/runtime/circuit/circuit_breaker.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace brick {

void PrintTo(CircuitState state, std::ostream* os) { *os << to_string(state); }

namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr auto kFast = 1ms;

CircuitBreakerConfig count_config(std::uint32_t window, std::uint32_t minimum, float threshold) {
  CircuitBreakerConfig config;
  config.sliding_window_type = SlidingWindowType::CountBased;
  config.sliding_window_size = window;
  config.minimum_number_of_calls = minimum;
  config.failure_rate_threshold = threshold;
  config.wait_duration_in_open_state = 10s;
  config.permitted_number_of_calls_in_half_open_state = 3;
  return config;
}

// Makes one call through the breaker's permission protocol; false when it was rejected.
bool succeed(CircuitBreaker& breaker, std::chrono::nanoseconds duration = kFast) {
  if (!breaker.try_acquire_permission()) return false;
  breaker.on_success(duration);
  return true;
}
bool fail(CircuitBreaker& breaker, std::chrono::nanoseconds duration = kFast) {
  if (!breaker.try_acquire_permission()) return false;
  breaker.on_error(duration);
  return true;
}

void open_breaker(CircuitBreaker& breaker) {
  while (breaker.state() == CircuitState::Closed) ASSERT_TRUE(fail(breaker));
  ASSERT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, FailSuccessFailSuccessOpensAfterTheFourthCall) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(4, 4, 50.0f), clock);
  ASSERT_TRUE(fail(breaker));
  ASSERT_TRUE(succeed(breaker));
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  EXPECT_FALSE(breaker.metrics().failure_rate.has_value()) << "3 calls are below the minimum of 4";
  ASSERT_TRUE(succeed(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  const CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.failure_rate, 50.0f);
  EXPECT_EQ(m.buffered_calls, 4u);
  EXPECT_EQ(m.failed_calls, 2u);
  EXPECT_EQ(m.successful_calls, 2u);
  EXPECT_FALSE(breaker.try_acquire_permission());
}

TEST(CircuitBreaker, RatesWaitForTheMinimumNumberOfCalls) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(10, 5, 50.0f), clock);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  EXPECT_FALSE(breaker.metrics().failure_rate.has_value());
  EXPECT_EQ(breaker.metrics().failed_calls, 4u);
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, CountBasedMinimumIsCappedAtTheWindowSize) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(3, 100, 50.0f), clock);
  ASSERT_TRUE(fail(breaker));
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, ThresholdIsInclusiveAndTheOldestCallSlidesOut) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(4, 4, 50.0f), clock);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(succeed(breaker));
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.metrics().failure_rate, 25.0f);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  // The window becomes S S F F: the first success slid out, 2 of 4 failed.
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  EXPECT_EQ(breaker.metrics().buffered_calls, 4u);
  EXPECT_EQ(breaker.metrics().failure_rate, 50.0f);
}

TEST(CircuitBreaker, SlowMeansStrictlyAboveTheDurationThreshold) {
  ManualClock clock;
  CircuitBreakerConfig config = count_config(4, 4, 100.0f);
  config.slow_call_duration_threshold = 100ms;
  config.slow_call_rate_threshold = 50.0f;
  CircuitBreaker breaker(config, clock);
  ASSERT_TRUE(succeed(breaker, 100ms));
  ASSERT_TRUE(succeed(breaker, 100ms));
  ASSERT_TRUE(fail(breaker, 100ms + 1ns));
  ASSERT_TRUE(succeed(breaker, 100ms));
  CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.slow_calls, 1u);
  EXPECT_EQ(m.slow_failed_calls, 1u);
  EXPECT_EQ(m.slow_call_rate, 25.0f);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  // Window: 100ms, slow failure, 100ms, slow success -> 50% slow.
  ASSERT_TRUE(succeed(breaker, 2s));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  m = breaker.metrics();
  EXPECT_EQ(m.slow_calls, 2u);
  EXPECT_EQ(m.slow_successful_calls, 1u);
  EXPECT_EQ(m.slow_failed_calls, 1u);
  EXPECT_EQ(m.failure_rate, 25.0f);
}

TEST(CircuitBreaker, OpenRejectsUntilStrictlyAfterTheWaitThenHalfOpens) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  open_breaker(breaker);
  clock.advance(10s);
  EXPECT_FALSE(breaker.try_acquire_permission()) << "resilience4j waits until strictly after";
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  clock.advance(1ns);
  EXPECT_TRUE(breaker.try_acquire_permission());
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
}

TEST(CircuitBreaker, RejectedCallsAreCountedApartAndNeverAsFailures) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  open_breaker(breaker);
  const CircuitBreakerMetrics before = breaker.metrics();
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(breaker.try_acquire_permission());
  const CircuitBreakerMetrics after = breaker.metrics();
  EXPECT_EQ(after.not_permitted_calls, before.not_permitted_calls + 100);
  EXPECT_EQ(after.failed_calls, before.failed_calls);
  EXPECT_EQ(after.buffered_calls, before.buffered_calls);
}

TEST(CircuitBreaker, HalfOpenPermitsExactlyTheConfiguredCalls) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  open_breaker(breaker);
  clock.advance(11s);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(breaker.try_acquire_permission()) << i;
  for (int i = 0; i < 7; ++i) EXPECT_FALSE(breaker.try_acquire_permission()) << i;
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
  EXPECT_EQ(breaker.metrics().not_permitted_calls, 7u);
  // A permit handed back may be used again, but never more than the configured number.
  breaker.release_permission();
  EXPECT_TRUE(breaker.try_acquire_permission());
  EXPECT_FALSE(breaker.try_acquire_permission());
}

TEST(CircuitBreaker, HalfOpenClosesWhenItsCallsAreHealthy) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 3, 50.0f), clock);
  open_breaker(breaker);
  clock.advance(11s);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(breaker.try_acquire_permission());
  breaker.on_success(kFast);
  breaker.on_error(kFast);
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen) << "2 of 3 outcomes are in";
  breaker.on_success(kFast);  // 1 of 3 failed: 33% < 50%
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  EXPECT_EQ(breaker.metrics().buffered_calls, 0u) << "Closed starts with an empty window";
  EXPECT_TRUE(breaker.try_acquire_permission());
}

TEST(CircuitBreaker, HalfOpenReopensWhenItsCallsFail) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 3, 50.0f), clock);
  open_breaker(breaker);
  clock.advance(11s);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(breaker.try_acquire_permission());
  breaker.on_success(kFast);
  breaker.on_error(kFast);
  breaker.on_error(kFast);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  EXPECT_FALSE(breaker.try_acquire_permission());
  // The wait starts again from the moment it re-opened.
  clock.advance(10s + 1ns);
  EXPECT_TRUE(breaker.try_acquire_permission());
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
}

TEST(CircuitBreaker, HalfOpenDecidesAtTheMinimumWhenItIsBelowThePermits) {
  // resilience4j's half-open window has minimum min(minimum_number_of_calls, permitted).
  ManualClock clock;
  CircuitBreakerConfig config = count_config(2, 2, 50.0f);
  config.permitted_number_of_calls_in_half_open_state = 4;
  CircuitBreaker breaker(config, clock);
  open_breaker(breaker);
  clock.advance(11s);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(breaker.try_acquire_permission());
  breaker.on_error(kFast);
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
  breaker.on_error(kFast);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, HalfOpenGivesUpAfterItsMaximumWait) {
  ManualClock clock;
  CircuitBreakerConfig config = count_config(2, 2, 50.0f);
  config.max_wait_duration_in_half_open_state = 5s;
  CircuitBreaker breaker(config, clock);
  open_breaker(breaker);
  clock.advance(11s);
  ASSERT_TRUE(breaker.try_acquire_permission());
  clock.advance(5s - 1ns);
  EXPECT_TRUE(breaker.try_acquire_permission());
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
  clock.advance(1ns);
  EXPECT_FALSE(breaker.try_acquire_permission());
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, OutcomesArrivingWhileOpenAreStillRecorded) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(4, 4, 50.0f), clock);
  ASSERT_TRUE(breaker.try_acquire_permission());  // permitted while Closed, completes later
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fail(breaker));
  ASSERT_EQ(breaker.state(), CircuitState::Open);
  breaker.on_success(kFast);
  const CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.buffered_calls, 4u);
  EXPECT_EQ(m.failed_calls, 3u);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, TimeBasedWindowForgetsCallsOlderThanItsSeconds) {
  CircuitBreakerConfig config = count_config(10, 2, 50.0f);
  config.sliding_window_type = SlidingWindowType::TimeBased;
  config.minimum_number_of_calls = 2;

  {
    ManualClock clock;
    CircuitBreaker breaker(config, clock);
    ASSERT_TRUE(fail(breaker));  // second 0
    clock.advance(10s);          // second 10: second 0 left the 10-second window
    ASSERT_TRUE(succeed(breaker));
    EXPECT_EQ(breaker.metrics().buffered_calls, 1u);
    ASSERT_TRUE(succeed(breaker));
    EXPECT_EQ(breaker.state(), CircuitState::Closed);
    EXPECT_EQ(breaker.metrics().failure_rate, 0.0f);
    clock.advance(9s);  // second 19 still holds both successes from second 10
    EXPECT_EQ(breaker.metrics().buffered_calls, 2u);
    clock.advance(1s);
    EXPECT_EQ(breaker.metrics().buffered_calls, 0u) << "reading the metrics slides the window too";
  }
  {
    ManualClock clock;
    CircuitBreaker breaker(config, clock);
    ASSERT_TRUE(fail(breaker));
    clock.advance(10s - 1ns);  // second 9: second 0 is still inside
    ASSERT_TRUE(succeed(breaker));
    EXPECT_EQ(breaker.state(), CircuitState::Open);
  }
}

TEST(CircuitBreaker, TimeBasedMinimumIsNotCapped) {
  ManualClock clock;
  CircuitBreakerConfig config = count_config(2, 5, 50.0f);
  config.sliding_window_type = SlidingWindowType::TimeBased;
  CircuitBreaker breaker(config, clock);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST(CircuitBreaker, DisabledPermitsAllAndRecordsNothing) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  breaker.transition_to_disabled();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::Disabled);
  EXPECT_EQ(breaker.metrics().buffered_calls, 0u);
}

TEST(CircuitBreaker, ForcedOpenRejectsAllWhateverTheTime) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  breaker.transition_to_forced_open();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(breaker.try_acquire_permission());
  clock.advance(1h);
  EXPECT_FALSE(breaker.try_acquire_permission());
  EXPECT_EQ(breaker.state(), CircuitState::ForcedOpen);
  EXPECT_EQ(breaker.metrics().not_permitted_calls, 6u);
  breaker.reset();
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  EXPECT_EQ(breaker.metrics().not_permitted_calls, 0u);
  EXPECT_TRUE(breaker.try_acquire_permission());
}

TEST(CircuitBreaker, ListenersSeeEveryTransitionInOrder) {
  ManualClock clock;
  CircuitBreakerConfig config = count_config(2, 2, 50.0f);
  config.permitted_number_of_calls_in_half_open_state = 1;
  CircuitBreaker breaker(config, clock);
  std::vector<CircuitStateTransition> seen;
  std::vector<CircuitState> seen_by_second;
  breaker.add_state_listener([&](const CircuitStateTransition& t) { seen.push_back(t); });
  breaker.add_state_listener([&](const CircuitStateTransition& t) { seen_by_second.push_back(t.to); });

  open_breaker(breaker);                 // t=0   Closed -> Open
  clock.advance(11s);
  ASSERT_TRUE(succeed(breaker));         // t=11  Open -> HalfOpen -> Closed
  breaker.transition_to_closed();        //       same state: rebuilt, not reported
  breaker.transition_to_forced_open();   //       Closed -> ForcedOpen
  breaker.transition_to_disabled();      //       ForcedOpen -> Disabled
  breaker.transition_to_open();          //       Disabled -> Open
  breaker.transition_to_half_open();     //       Open -> HalfOpen
  breaker.reset();                       //       HalfOpen -> Closed

  using S = CircuitState;
  const Clock::time_point t0{}, t11{11s};
  const std::vector<CircuitStateTransition> expected{
      {S::Closed, S::Open, t0},           {S::Open, S::HalfOpen, t11},
      {S::HalfOpen, S::Closed, t11},      {S::Closed, S::ForcedOpen, t11},
      {S::ForcedOpen, S::Disabled, t11},  {S::Disabled, S::Open, t11},
      {S::Open, S::HalfOpen, t11},        {S::HalfOpen, S::Closed, t11},
  };
  EXPECT_EQ(seen, expected);
  ASSERT_EQ(seen_by_second.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(seen_by_second[i], expected[i].to);
}

TEST(CircuitBreaker, ManualTransitionToClosedClearsTheWindow) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(4, 4, 50.0f), clock);
  ASSERT_TRUE(fail(breaker));
  ASSERT_TRUE(fail(breaker));
  breaker.transition_to_closed();
  EXPECT_EQ(breaker.metrics().buffered_calls, 0u);
}

TEST(CircuitBreaker, ListenersRunOutsideTheLockAndMayCallBack) {
  ManualClock clock;
  CircuitBreaker breaker(count_config(2, 2, 50.0f), clock);
  std::vector<CircuitState> states_seen_inside;
  std::vector<CircuitState> targets;
  breaker.add_state_listener([&](const CircuitStateTransition& t) {
    targets.push_back(t.to);
    states_seen_inside.push_back(breaker.state());
    (void)breaker.metrics();  // would deadlock if listeners ran under the breaker's mutex
    if (t.to == CircuitState::Open) breaker.transition_to_forced_open();
  });
  ASSERT_TRUE(fail(breaker));
  ASSERT_TRUE(fail(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::ForcedOpen);
  EXPECT_EQ(targets, (std::vector<CircuitState>{CircuitState::Open, CircuitState::ForcedOpen}));
  // The nested transition is delivered after the listener that caused it returned.
  EXPECT_EQ(states_seen_inside,
            (std::vector<CircuitState>{CircuitState::Open, CircuitState::ForcedOpen}));
}

TEST(CircuitBreaker, CallRecordsOutcomesTimedByTheClockAndRethrows) {
  ManualClock clock;
  CircuitBreakerConfig config = count_config(10, 10, 50.0f);
  config.slow_call_duration_threshold = 1s;
  CircuitBreaker breaker(config, clock);

  EXPECT_EQ(breaker.call([] { return 42; }), 42);
  EXPECT_EQ(*breaker.call([] { return std::make_unique<int>(7); }), 7);
  int target = 0;
  int& ref = breaker.call([&]() -> int& { return target; });
  EXPECT_EQ(&ref, &target);
  breaker.call([&] { clock.advance(2s); });
  EXPECT_THROW(breaker.call([]() -> int { throw std::runtime_error("backend down"); }),
               std::runtime_error);

  const CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.buffered_calls, 5u);
  EXPECT_EQ(m.failed_calls, 1u);
  EXPECT_EQ(m.slow_calls, 1u);

  breaker.transition_to_forced_open();
  try {
    breaker.call([] { ADD_FAILURE() << "a rejected call must not run"; });
    ADD_FAILURE() << "expected CallNotPermitted";
  } catch (const CallNotPermitted& e) {
    EXPECT_EQ(e.state(), CircuitState::ForcedOpen);
    EXPECT_THAT(e.what(), HasSubstr("ForcedOpen"));
  }
}

TEST(CircuitBreakerConfig, RejectsValuesOutsideTheirDomainNamingTheField) {
  const auto expect_invalid = [](auto mutate, const char* field) {
    CircuitBreakerConfig config;
    mutate(config);
    try {
      config.validate();
      ADD_FAILURE() << "expected InvalidArgument for " << field;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(field));
    }
    ManualClock clock;
    EXPECT_THROW(CircuitBreaker(config, clock), InvalidArgument) << field;
  };
  expect_invalid([](auto& c) { c.failure_rate_threshold = 0.0f; }, "failure_rate_threshold");
  expect_invalid([](auto& c) { c.failure_rate_threshold = 100.01f; }, "failure_rate_threshold");
  expect_invalid([](auto& c) { c.failure_rate_threshold = std::nanf(""); }, "failure_rate_threshold");
  expect_invalid([](auto& c) { c.slow_call_rate_threshold = -1.0f; }, "slow_call_rate_threshold");
  expect_invalid([](auto& c) { c.slow_call_duration_threshold = 0ns; }, "slow_call_duration_threshold");
  expect_invalid([](auto& c) { c.sliding_window_size = 0; }, "sliding_window_size");
  expect_invalid([](auto& c) { c.minimum_number_of_calls = 0; }, "minimum_number_of_calls");
  expect_invalid([](auto& c) { c.wait_duration_in_open_state = 0ns; }, "wait_duration_in_open_state");
  expect_invalid([](auto& c) { c.permitted_number_of_calls_in_half_open_state = 0; },
                 "permitted_number_of_calls_in_half_open_state");
  expect_invalid([](auto& c) { c.max_wait_duration_in_half_open_state = -1ns; },
                 "max_wait_duration_in_half_open_state");

  CircuitBreakerConfig edge;
  edge.failure_rate_threshold = 100.0f;
  edge.slow_call_rate_threshold = 0.001f;
  edge.sliding_window_size = 1;
  edge.minimum_number_of_calls = 1;
  EXPECT_NO_THROW(edge.validate());
}

// Window sizes used to pass validate() and then fail with std::bad_alloc when the window was built:
// at construction for the closed window, and on every permission request after the wait for the
// half-open one, which left the breaker stuck Open.
TEST(CircuitBreakerConfig, WindowSizesAreBoundedSoThatAValidConfigNeverFailsLater) {
  for (const auto type : {SlidingWindowType::CountBased, SlidingWindowType::TimeBased}) {
    CircuitBreakerConfig config = count_config(2, 2, 50.0f);
    config.sliding_window_type = type;
    config.sliding_window_size = UINT32_MAX;
    EXPECT_THROW(config.validate(), InvalidArgument);
    config.sliding_window_size = SlidingWindow::kMaxSize + 1;
    EXPECT_THROW(config.validate(), InvalidArgument);
  }
  CircuitBreakerConfig config = count_config(2, 2, 50.0f);
  config.permitted_number_of_calls_in_half_open_state = UINT32_MAX;
  try {
    config.validate();
    FAIL() << "UINT32_MAX half-open permits validated";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("permitted_number_of_calls_in_half_open_state must be in 1..1048576"));
  }

  // The largest sizes work all the way through Open and HalfOpen.
  config.sliding_window_size = SlidingWindow::kMaxSize;
  config.minimum_number_of_calls = 2;
  config.permitted_number_of_calls_in_half_open_state = SlidingWindow::kMaxSize;
  ManualClock clock;
  CircuitBreaker breaker(config, clock);
  open_breaker(breaker);
  clock.advance(11s);
  EXPECT_TRUE(succeed(breaker));
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
}

TEST(CircuitBreakerConcurrency, CountsAreExactAfterManyThreadsHammer) {
  constexpr int kThreads = 8, kCallsPerThread = 10000;
  ManualClock clock;
  CircuitBreakerConfig config;
  config.sliding_window_size = kThreads * kCallsPerThread;
  config.minimum_number_of_calls = kThreads * kCallsPerThread;
  config.failure_rate_threshold = 100.0f;
  config.slow_call_duration_threshold = 1s;
  CircuitBreaker breaker(config, clock);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        ASSERT_TRUE(breaker.try_acquire_permission());
        const auto duration = i % 8 == 0 ? 2s : std::chrono::nanoseconds(1ms);
        if (i % 4 == 0) {
          breaker.on_error(duration);
        } else {
          breaker.on_success(duration);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.buffered_calls, 80000u);
  EXPECT_EQ(m.failed_calls, 20000u);
  EXPECT_EQ(m.slow_calls, 10000u);
  EXPECT_EQ(m.slow_failed_calls, 10000u);
  EXPECT_EQ(m.failure_rate, 25.0f);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
}

TEST(CircuitBreakerConcurrency, HalfOpenHandsOutExactlyItsPermitsUnderContention) {
  constexpr int kThreads = 8, kAttempts = 1000;
  ManualClock clock;
  CircuitBreakerConfig config = count_config(2, 2, 50.0f);
  config.permitted_number_of_calls_in_half_open_state = 5;
  CircuitBreaker breaker(config, clock);
  breaker.transition_to_half_open();
  std::atomic<int> permitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) permitted += breaker.try_acquire_permission();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(permitted.load(), 5);
  EXPECT_EQ(breaker.metrics().not_permitted_calls, std::uint64_t{kThreads * kAttempts - 5});
}

TEST(CircuitBreakerConcurrency, OpensOnceUnderContentionAndAccountsForEveryAttempt) {
  constexpr int kThreads = 8, kAttempts = 5000;
  ManualClock clock;
  CircuitBreaker breaker(count_config(10, 10, 50.0f), clock);
  std::atomic<int> transitions{0};
  breaker.add_state_listener([&](const CircuitStateTransition& t) {
    EXPECT_EQ(t.from, CircuitState::Closed);
    EXPECT_EQ(t.to, CircuitState::Open);
    ++transitions;
  });
  std::atomic<std::uint64_t> rejected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) {
        if (breaker.try_acquire_permission()) {
          breaker.on_error(kFast);
        } else {
          ++rejected;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(transitions.load(), 1);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  const CircuitBreakerMetrics m = breaker.metrics();
  EXPECT_EQ(m.not_permitted_calls, rejected.load());
  EXPECT_EQ(m.buffered_calls, 10u);
  EXPECT_EQ(m.failed_calls, 10u);
  EXPECT_GE(rejected.load(), std::uint64_t{kThreads * kAttempts} - 10 - kThreads);
}

}  // namespace
}  // namespace brick
