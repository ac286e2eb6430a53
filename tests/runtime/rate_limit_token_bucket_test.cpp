#include "brick/runtime/rate_limit/token_bucket.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucket, GoVectorRate10Burst3) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  EXPECT_TRUE(bucket.allow());
  EXPECT_TRUE(bucket.allow());
  EXPECT_TRUE(bucket.allow());
  EXPECT_FALSE(bucket.allow());
  clock.advance(100ms);
  EXPECT_TRUE(bucket.allow());
  EXPECT_FALSE(bucket.allow());
  const Reservation too_big = bucket.reserve(4);
  EXPECT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.delay(), Reservation::kNever);
}

TEST(TokenBucket, StartsFullAndRefillsUpToTheBurstOnly) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  EXPECT_EQ(bucket.tokens(), 3.0);
  EXPECT_TRUE(bucket.allow(3));
  EXPECT_EQ(bucket.tokens(), 0.0);
  clock.advance(50ms);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.5);
  clock.advance(1h);
  EXPECT_EQ(bucket.tokens(), 3.0);
  EXPECT_FALSE(bucket.allow(4));
  EXPECT_EQ(bucket.tokens(), 3.0) << "a refused allow takes nothing";
}

TEST(TokenBucket, ReservationsQueueOnCredit) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  const Reservation all = bucket.reserve(3);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.delay(), 0ns);
  const Reservation one = bucket.reserve(1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.delay(), 100ms);
  const Reservation two = bucket.reserve(2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two.time_to_act(), Clock::time_point{300ms});
  EXPECT_DOUBLE_EQ(bucket.tokens(), -3.0);
  clock.advance(120ms);
  EXPECT_EQ(one.delay(), 0ns);
  EXPECT_EQ(two.delay(), 180ms);
  EXPECT_EQ(two.delay_from(Clock::time_point{1s}), 0ns);
  EXPECT_FALSE(bucket.allow()) << "tokens are owed to the reservations";
}

TEST(TokenBucket, CancellingTheLastReservationGivesItsTokensBack) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  Reservation r = bucket.reserve(2);
  ASSERT_EQ(r.delay(), 200ms);
  r.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0);
  r.cancel();  // a second cancel gives nothing more
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0);
  // The next reservation is priced as if the cancelled one never happened.
  const Reservation next = bucket.reserve(1);
  EXPECT_EQ(next.delay(), 100ms);
}

TEST(TokenBucket, AMovedReservationIsCancelledOnlyOnce) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  Reservation original = bucket.reserve(2);
  Reservation moved = std::move(original);
  EXPECT_FALSE(original.ok()) << "a moved-from reservation is documented as not ok";
  EXPECT_TRUE(moved.ok());
  original.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), -2.0);
  moved.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0);
}

TEST(TokenBucket, CancellingAnEarlierReservationKeepsWhatLaterOnesReliedOn) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  Reservation first = bucket.reserve(1);   // acts at 100 ms
  Reservation second = bucket.reserve(1);  // acts at 200 ms, priced after `first`
  EXPECT_DOUBLE_EQ(bucket.tokens(), -2.0);
  first.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), -2.0) << "second's place in the queue was built on first's token";
  second.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), -1.0);
}

TEST(TokenBucket, CancellingAfterTheTimeToActOrWhenNotOkDoesNothing) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  Reservation r = bucket.reserve(1);  // acts at 100 ms
  clock.advance(150ms);
  r.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.5);
  Reservation refused = bucket.reserve(10);
  ASSERT_FALSE(refused.ok());
  refused.cancel();
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.5);
}

TEST(TokenBucket, InfiniteRateAdmitsEverythingEvenWithBurstZero) {
  ManualClock clock;
  TokenBucket bucket(TokenBucket::kInfiniteRate, 0, clock);
  EXPECT_TRUE(bucket.allow(1'000'000));
  const Reservation r = bucket.reserve(1'000'000);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.delay(), 0ns);
  EXPECT_EQ(bucket.wait(1'000'000), WaitResult::Acquired);
}

TEST(TokenBucket, BurstZeroAtAFiniteRateAdmitsOnlyNothing) {
  ManualClock clock;
  TokenBucket bucket(1000.0, 0, clock);
  EXPECT_FALSE(bucket.allow(1));
  clock.advance(1h);
  EXPECT_FALSE(bucket.allow(1));
  EXPECT_FALSE(bucket.reserve(1).ok());
  EXPECT_TRUE(bucket.allow(0));
  EXPECT_EQ(bucket.wait(1), WaitResult::ExceedsBurst);
}

TEST(TokenBucket, ZeroRateSpendsTheBurstOnce) {
  ManualClock clock;
  TokenBucket bucket(0.0, 3, clock);
  EXPECT_TRUE(bucket.allow(2));
  EXPECT_FALSE(bucket.allow(2));
  EXPECT_TRUE(bucket.allow(1));
  EXPECT_FALSE(bucket.allow(1));
  clock.advance(24h);
  EXPECT_FALSE(bucket.allow(1));
}

TEST(TokenBucket, SettingRateOrBurstKeepsTheTokensAccruedSoFar) {
  ManualClock clock;
  TokenBucket bucket(10.0, 10, clock);
  ASSERT_TRUE(bucket.allow(10));
  clock.advance(500ms);  // 5 tokens at the old rate
  bucket.set_rate(100.0);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 5.0);
  clock.advance(20ms);  // 2 more at the new rate
  EXPECT_DOUBLE_EQ(bucket.tokens(), 7.0);
  bucket.set_burst(4);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 4.0);
  EXPECT_EQ(bucket.burst(), 4u);
  EXPECT_EQ(bucket.rate(), 100.0);
  EXPECT_THROW(bucket.set_rate(-1.0), InvalidArgument);
}

TEST(TokenBucket, RejectsANegativeOrNanRate) {
  ManualClock clock;
  EXPECT_THROW(TokenBucket(-0.5, 1, clock), InvalidArgument);
  EXPECT_THROW(TokenBucket(std::nan(""), 1, clock), InvalidArgument);
}

TEST(TokenBucketWait, FailsAtOnceWhenNExceedsTheBurst) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  EXPECT_EQ(bucket.wait(4, clock.now() + 1h), WaitResult::ExceedsBurst);
  EXPECT_EQ(bucket.tokens(), 3.0);
}

TEST(TokenBucketWait, FailsAtOnceWhenTheWaitWouldPassTheDeadline) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  EXPECT_EQ(bucket.wait(1, clock.now() + 99ms), WaitResult::ExceedsDeadline);
  EXPECT_EQ(bucket.tokens(), 0.0) << "nothing reserved";
  EXPECT_EQ(bucket.wait(1, clock.now() - 1ns), WaitResult::ExceedsDeadline);
  EXPECT_EQ(clock.sleepers(), 0u);
}

TEST(TokenBucketWait, ReturnsAtOnceWhenTokensAreThere) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  EXPECT_EQ(bucket.wait(3, clock.now()), WaitResult::Acquired);
  EXPECT_EQ(bucket.tokens(), 0.0);
}

TEST(TokenBucketWait, SleepsOnTheClockUntilTheTimeToAct) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  WaitResult result = WaitResult::Cancelled;
  std::thread waiter([&] { result = bucket.wait(2, clock.now() + 200ms); });
  clock.wait_for_sleepers(1);
  EXPECT_EQ(clock.earliest_sleeper_deadline(), Clock::time_point{200ms});
  clock.advance(200ms);
  waiter.join();
  EXPECT_EQ(result, WaitResult::Acquired);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0);
}

TEST(TokenBucketWait, StopCancelsTheWaitAndItsReservation) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3, clock);
  ASSERT_TRUE(bucket.allow(3));
  std::stop_source stop;
  WaitResult result = WaitResult::Acquired;
  std::thread waiter([&] { result = bucket.wait(1, stop.get_token()); });
  clock.wait_for_sleepers(1);
  EXPECT_DOUBLE_EQ(bucket.tokens(), -1.0);
  stop.request_stop();
  waiter.join();
  EXPECT_EQ(result, WaitResult::Cancelled);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0) << "the cancelled reservation gave its token back";
  stop = std::stop_source();
  stop.request_stop();
  EXPECT_EQ(bucket.wait(1, stop.get_token()), WaitResult::Cancelled);
}

TEST(TokenBucketProperty, NeverAdmitsMoreThanBurstPlusRateTimesElapsed) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 50; ++trial) {
    const double rate = std::uniform_real_distribution<double>(0.5, 200.0)(rng);
    const std::size_t burst = std::uniform_int_distribution<std::size_t>(1, 20)(rng);
    ManualClock clock;
    TokenBucket bucket(rate, burst, clock);
    std::uniform_int_distribution<std::int64_t> gap_us(0, 50'000);
    std::uniform_int_distribution<std::size_t> size(1, burst);
    std::size_t admitted = 0;
    for (int step = 0; step < 2000; ++step) {
      clock.advance(std::chrono::microseconds(gap_us(rng)));
      const std::size_t n = size(rng);
      if (bucket.allow(n)) admitted += n;
      const double elapsed_s = std::chrono::duration<double>(clock.now().time_since_epoch()).count();
      ASSERT_LE(static_cast<double>(admitted), static_cast<double>(burst) + rate * elapsed_s + 1e-6)
          << "trial " << trial << " step " << step;
    }
  }
}

TEST(TokenBucketProperty, RequestsPacedAtTheRateAreAllAdmitted) {
  ManualClock clock;
  TokenBucket bucket(10.0, 1, clock);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(bucket.allow()) << i;
    clock.advance(50ms);
    ASSERT_FALSE(bucket.allow()) << i;
    clock.advance(50ms);
  }
}

TEST(TokenBucketConcurrency, ThreadsHammeringAFrozenClockGetExactlyTheBurst) {
  constexpr int kThreads = 8, kAttempts = 5000;
  ManualClock clock;
  TokenBucket bucket(10.0, 1000, clock);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) admitted += bucket.allow();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 1000);
}

TEST(TokenBucketConcurrency, ThreadsHammeringWhileTheClockMovesGetExactlyWhatAccrued) {
  constexpr int kThreads = 4, kSteps = 200;
  ManualClock clock;
  // 2 tokens/s and 500 ms steps: one token per step, exactly representable, never capped by burst.
  TokenBucket bucket(2.0, 1000, clock);
  ASSERT_TRUE(bucket.allow(1000));
  std::atomic<int> admitted{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!done.load()) admitted += bucket.allow();
    });
  }
  for (int step = 0; step < kSteps; ++step) clock.advance(500ms);
  done = true;
  for (auto& thread : threads) thread.join();
  while (bucket.allow()) ++admitted;
  EXPECT_EQ(admitted.load(), kSteps);
  EXPECT_DOUBLE_EQ(bucket.tokens(), 0.0);
}

}  // namespace
}  // namespace brick
