#include "brick/profile/profiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

ProfilerOptions manual(const Clock& clock, SyncMode mode = SyncMode::Eager) {
  ProfilerOptions options;
  options.clock = ClockSource::Manual;
  options.manual_clock = &clock;
  options.sync_mode = mode;
  return options;
}

// Runs one brick of `ns` on the manual clock.
template <class ClockType>
void run(BrickProfiler& profiler, ClockType& clock, BrickId id, std::uint64_t ns,
         std::uint64_t elements = 1) {
  ProfileTimer timer = profiler.start(id);
  clock.advance(std::chrono::nanoseconds(ns));
  profiler.stop(timer, elements);
}

TEST(BrickProfiler, EagerRecordsEachStopImmediately) {
  ManualClock clock;
  clock.advance_to(Clock::time_point(std::chrono::nanoseconds(1'000'000)));
  BrickProfiler profiler(manual(clock));
  EXPECT_EQ(profiler.clock_source(), ClockSource::Manual);
  ProfileTimer timer = profiler.start(BrickId::RmsNorm);
  EXPECT_TRUE(timer.running());
  clock.advance(std::chrono::nanoseconds(250));
  profiler.stop(timer, 4, 1024, 512);
  EXPECT_FALSE(timer.running());
  const BrickStats stats = profiler.brick_stats(BrickId::RmsNorm);
  EXPECT_EQ(stats.count, 1u);
  EXPECT_EQ(stats.total_ns, 250u);
  EXPECT_EQ(stats.elements, 4u);
  EXPECT_EQ(stats.bytes, 1024u);
  EXPECT_EQ(stats.flops, 512u);
  EXPECT_EQ(profiler.total_ns(), 250u);
}

TEST(BrickProfiler, StatisticsOfSeveralStopsMatchHandComputedValues) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  for (const std::uint64_t ns : {10u, 20u, 30u, 40u})
    run(profiler, clock, BrickId::Activation, ns, 2);
  profiler.record(BrickId::Activation, 100, 2);
  const BrickStats stats = profiler.brick_stats(BrickId::Activation);
  EXPECT_EQ(stats.count, 5u);
  EXPECT_EQ(stats.total_ns, 200u);
  EXPECT_EQ(stats.min_ns, 10u);
  EXPECT_EQ(stats.max_ns, 100u);
  EXPECT_EQ(stats.elements, 10u);
  EXPECT_DOUBLE_EQ(stats.mean_ns(), 40.0);
  // Deviations -30, -20, -10, 0, 60: (900 + 400 + 100 + 0 + 3600) / 5.
  EXPECT_DOUBLE_EQ(stats.variance_ns2(), 1000.0);
  EXPECT_EQ(stats.percentile_ns(0.5), 30u);  // values below 64 ns are exact
  EXPECT_DOUBLE_EQ(stats.us_per_token(), 0.02);
}

TEST(BrickProfiler, DeferredBuffersUntilEndLayerAndChargesEachBrickItsOwnInterval) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Deferred));
  profiler.begin_layer(3);
  run(profiler, clock, BrickId::RmsNorm, 100);
  run(profiler, clock, BrickId::QkvProjection, 700);
  clock.advance(std::chrono::nanoseconds(50));  // unprofiled gap: charged to nobody
  run(profiler, clock, BrickId::AttentionOutput, 200);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 0u)
      << "Deferred must not resolve before end_layer";
  profiler.end_layer();
  // The design this replaces charged every brick to the layer end (RmsNorm would get 1050 ns).
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).total_ns, 100u);
  EXPECT_EQ(profiler.brick_stats(BrickId::QkvProjection).total_ns, 700u);
  EXPECT_EQ(profiler.brick_stats(BrickId::AttentionOutput).total_ns, 200u);
  const LayerStats layers = profiler.layer_stats();
  EXPECT_EQ(layers.count, 1u);
  EXPECT_EQ(layers.wall_ns, 1050u);
  EXPECT_EQ(layers.attributed_ns, 1000u);
}

TEST(BrickProfiler, DeferredBackToBackBricksSumExactlyToLayerWallTime) {
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    ManualClock clock;
    BrickProfiler profiler(manual(clock, mode));
    std::uint64_t sum = 0;
    for (std::uint32_t layer = 0; layer < 4; ++layer) {
      profiler.begin_layer(layer);
      for (const BrickId id : all_brick_ids()) {
        const std::uint64_t ns = 100 + 37 * index(id) + layer;
        run(profiler, clock, id, ns);
        sum += ns;
      }
      profiler.end_layer();
    }
    const LayerStats layers = profiler.layer_stats();
    EXPECT_EQ(layers.count, 4u);
    EXPECT_EQ(layers.wall_ns, sum);
    EXPECT_EQ(layers.attributed_ns, sum);
    EXPECT_EQ(profiler.total_ns(), sum);
  }
}

// The real clock, real work: per-brick times in a layer must add up to the layer's wall time within
// 1% when bricks run back to back (only the profiler's own few ns per brick fall between them). The
// median over layers is checked, so one layer preempted between two bricks cannot fail the test.
TEST(BrickProfiler, DeferredBrickTimesSumToMeasuredWallTimeWithTheRealClock) {
  BrickProfiler profiler(ProfilerOptions{.sync_mode = SyncMode::Deferred});
  volatile double sink = 0;
  std::vector<double> ratios;
  LayerStats before = profiler.layer_stats();
  for (std::uint32_t layer = 0; layer < 9; ++layer) {
    profiler.begin_layer(layer);
    for (const BrickId id : all_brick_ids()) {
      ProfileTimer timer = profiler.start(id);
      double x = 1.0;
      for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
      sink = sink + x;
      profiler.stop(timer, 1);
    }
    profiler.end_layer();
    const LayerStats after = profiler.layer_stats();
    ASSERT_EQ(after.count, before.count + 1);
    ASSERT_GT(after.wall_ns, before.wall_ns);
    ratios.push_back(static_cast<double>(after.attributed_ns - before.attributed_ns) /
                     static_cast<double>(after.wall_ns - before.wall_ns));
    EXPECT_LE(ratios.back(), 1.0) << "bricks cannot take longer than their layer";
    before = after;
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_GE(ratios[ratios.size() / 2], 0.99);
}

TEST(BrickProfiler, DeferredFallsBackToResolvingAtStopWhenItsBufferIsFull) {
  ManualClock clock;
  ProfilerOptions options = manual(clock, SyncMode::Deferred);
  options.deferred_capacity_per_thread = 4;
  BrickProfiler profiler(options);
  profiler.begin_layer(0);
  for (int i = 0; i < 10; ++i) run(profiler, clock, BrickId::DownProjection, 10);
  EXPECT_EQ(profiler.brick_stats(BrickId::DownProjection).count, 6u);
  profiler.end_layer();
  EXPECT_EQ(profiler.brick_stats(BrickId::DownProjection).count, 10u);
  EXPECT_EQ(profiler.layer_stats().attributed_ns, 100u);
}

TEST(BrickProfiler, DeferredOutsideALayerResolvesAtStop) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Deferred));
  run(profiler, clock, BrickId::Sampling, 42);
  EXPECT_EQ(profiler.brick_stats(BrickId::Sampling).total_ns, 42u);
}

TEST(BrickProfiler, ScopeAndMacroTimeTheirScope) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  {
    ProfileScope scope(profiler, BrickId::UpProjection, 8);
    clock.advance(std::chrono::nanoseconds(300));
  }
  {
    BRICK_PROFILE_SCOPE(profiler, BrickId::UpProjection, 8, 4096, 1024);
    clock.advance(std::chrono::nanoseconds(500));
  }
  {
    BRICK_PROFILE_SCOPE(profiler, BrickId::GateProjection);
    BRICK_PROFILE_SCOPE(profiler,
                        BrickId::Activation);  // two on one line number apart are distinct
    clock.advance(std::chrono::nanoseconds(5));
  }
  {
    ProfileScope scope(profiler, BrickId::DownProjection);
    scope.set_work(16, 2048, 64);
    clock.advance(std::chrono::nanoseconds(7));
  }
  const BrickStats up = profiler.brick_stats(BrickId::UpProjection);
  EXPECT_EQ(up.count, 2u);
  EXPECT_EQ(up.total_ns, 800u);
  EXPECT_EQ(up.elements, 16u);
  EXPECT_EQ(up.bytes, 4096u);
  EXPECT_EQ(up.flops, 1024u);
  EXPECT_EQ(profiler.brick_stats(BrickId::GateProjection).total_ns, 5u);
  EXPECT_EQ(profiler.brick_stats(BrickId::Activation).total_ns, 5u);
  const BrickStats down = profiler.brick_stats(BrickId::DownProjection);
  EXPECT_EQ(down.elements, 16u);
  EXPECT_EQ(down.bytes, 2048u);
  EXPECT_EQ(down.flops, 64u);
}

TEST(BrickProfiler, StopWithAnOpCostRecordsItsWork) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer timer = profiler.start(BrickId::LmHead);
  clock.advance(std::chrono::nanoseconds(1000));
  profiler.stop(timer, OpCost{.tokens = 2, .flops = 3000.0, .bytes = 5000.0});
  const BrickStats stats = profiler.brick_stats(BrickId::LmHead);
  EXPECT_EQ(stats.elements, 2u);
  EXPECT_DOUBLE_EQ(stats.gb_per_second(), 5.0);
  EXPECT_DOUBLE_EQ(stats.gflop_per_second(), 3.0);
  EXPECT_DOUBLE_EQ(stats.tokens_per_second(), 2e6);

  ProfileTimer odd = profiler.start(BrickId::Embedding);
  profiler.stop(odd, OpCost{.tokens = 1, .flops = -5.0, .bytes = 1e300});
  EXPECT_EQ(profiler.brick_stats(BrickId::Embedding).flops, 0u);
  EXPECT_EQ(profiler.brick_stats(BrickId::Embedding).bytes, UINT64_MAX);
}

TEST(BrickProfiler, NamedBricksTakeTheSlowPathAndIdNamesTheFastOne) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer custom = profiler.start("my_fused_thing");
  clock.advance(std::chrono::nanoseconds(90));
  profiler.stop(custom, 3);
  ProfileTimer rope = profiler.start("rope");
  EXPECT_EQ(rope.id(), BrickId::RopeEmbedding);
  clock.advance(std::chrono::nanoseconds(10));
  profiler.stop(rope, 1);
  EXPECT_EQ(profiler.stats("my_fused_thing").total_ns, 90u);
  EXPECT_EQ(profiler.stats("my_fused_thing").elements, 3u);
  EXPECT_EQ(profiler.stats("RopeEmbedding").total_ns, 10u);
  EXPECT_EQ(profiler.stats("rope").total_ns, 10u);
  EXPECT_EQ(profiler.named_bricks(), std::vector<std::string>{"my_fused_thing"});
  EXPECT_EQ(profiler.total_ns(), 100u);
}

TEST(BrickProfiler, CategoryStatsMergeTheirBricks) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  run(profiler, clock, BrickId::GateProjection, 10);
  run(profiler, clock, BrickId::UpProjection, 20);
  run(profiler, clock, BrickId::DownProjection, 30);
  run(profiler, clock, BrickId::RmsNorm, 1000);
  const BrickStats ffn = profiler.category_stats(BrickCategory::Ffn);
  EXPECT_EQ(ffn.count, 3u);
  EXPECT_EQ(ffn.total_ns, 60u);
  EXPECT_EQ(ffn.min_ns, 10u);
  EXPECT_EQ(ffn.max_ns, 30u);
  EXPECT_DOUBLE_EQ(ffn.variance_ns2(), 200.0 / 3.0);
  EXPECT_EQ(profiler.category_stats(BrickCategory::Norm).total_ns, 1000u);
  EXPECT_EQ(profiler.category_stats(BrickCategory::Attention).count, 0u);
}

TEST(BrickProfiler, TokensAndResetAndBudgets) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  profiler.add_tokens(5);
  profiler.add_tokens(7);
  EXPECT_EQ(profiler.total_tokens(), 12u);
  profiler.set_budget(BrickId::RmsNorm, TokenBudget::from_us_per_token(2.0));
  run(profiler, clock, BrickId::RmsNorm, 100);
  profiler.reset();
  EXPECT_EQ(profiler.total_tokens(), 0u);
  EXPECT_EQ(profiler.total_ns(), 0u);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 0u);
  ASSERT_TRUE(profiler.budget(BrickId::RmsNorm).has_value());
  EXPECT_DOUBLE_EQ(profiler.budget(BrickId::RmsNorm)->us_per_token(), 2.0);
  profiler.clear_budget(BrickId::RmsNorm);
  EXPECT_FALSE(profiler.budget(BrickId::RmsNorm).has_value());
  run(profiler, clock, BrickId::RmsNorm, 100);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 1u);
}

// A manual clock that counts how often it is read.
class CountingClock final : public Clock {
 public:
  time_point now() const noexcept override {
    reads_.fetch_add(1, std::memory_order_relaxed);
    return inner_.now();
  }
  bool sleep_until(time_point deadline, std::stop_token stop) override {
    return inner_.sleep_until(deadline, stop);
  }
  std::uint64_t reads() const noexcept { return reads_.load(std::memory_order_relaxed); }
  void advance(duration by) { inner_.advance(by); }

 private:
  ManualClock inner_;
  mutable std::atomic<std::uint64_t> reads_{0};
};

TEST(BrickProfiler, DisabledProfilerRecordsNothingAndReadsNoClock) {
  CountingClock clock;
  ProfilerOptions options = manual(clock);
  options.enabled = false;
  BrickProfiler profiler(options);
  EXPECT_FALSE(profiler.is_enabled());
  const std::uint64_t reads_before = clock.reads();
  for (int i = 0; i < 100; ++i) {
    ProfileTimer timer = profiler.start(BrickId::RmsNorm);
    EXPECT_FALSE(timer.running());
    profiler.stop(timer, 1);
    profiler.stop(timer, 1);  // an inert timer may be stopped any number of times
  }
  { BRICK_PROFILE_SCOPE(profiler, BrickId::Embedding); }
  profiler.record(BrickId::RmsNorm, 10);
  profiler.add_tokens(3);
  profiler.begin_layer(0);
  profiler.end_layer();
  EXPECT_EQ(clock.reads(), reads_before);
  EXPECT_EQ(profiler.total_ns(), 0u);
  EXPECT_EQ(profiler.total_tokens(), 0u);
  EXPECT_EQ(profiler.layer_stats().count, 0u);
  for (std::size_t i = 0; i < kProfilerMisuseCount; ++i) {
    EXPECT_EQ(profiler.misuse_count(static_cast<ProfilerMisuse>(i)), 0u);
  }
  profiler.enable();
  run(profiler, clock, BrickId::RmsNorm, 5);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 1u);
}

TEST(BrickProfiler, ATimerStartedWhileEnabledIsRecordedAfterDisable) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer timer = profiler.start(BrickId::RmsNorm);
  profiler.disable();
  clock.advance(std::chrono::nanoseconds(9));
  profiler.stop(timer);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).total_ns, 9u);
}

TEST(BrickProfilerMisuse, StoppingTwiceIsCountedAndRecordsOnce) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer timer = profiler.start(BrickId::RmsNorm);
  clock.advance(std::chrono::nanoseconds(10));
  profiler.stop(timer);
  profiler.stop(timer);
  ProfileTimer never_started;
  profiler.stop(never_started);
  ProfileTimer moved_from = profiler.start(BrickId::RmsNorm);
  ProfileTimer moved_to = std::move(moved_from);
  profiler.stop(moved_from);  // NOLINT(bugprone-use-after-move): the point of the test
  profiler.stop(moved_to);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 2u);
  EXPECT_EQ(profiler.misuse_count(ProfilerMisuse::StopInactiveTimer), 3u);
  EXPECT_NE(profiler.summary().find("stop_inactive_timer=3"), std::string::npos);
}

TEST(BrickProfilerMisuse, StoppingOnAnotherThreadOrAfterResetIsCounted) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer timer = profiler.start(BrickId::RmsNorm);
  std::thread([&] { profiler.stop(timer); }).join();
  ProfileTimer stale = profiler.start(BrickId::RmsNorm);
  profiler.reset();
  profiler.stop(stale);
  EXPECT_EQ(profiler.misuse_count(ProfilerMisuse::ForeignTimer), 1u)
      << "reset() zeroes the earlier count";
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 0u);
}

TEST(BrickProfilerMisuse, InvalidIdsAreCountedNotRecorded) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  ProfileTimer timer = profiler.start(BrickId::COUNT);
  EXPECT_FALSE(timer.running());
  profiler.stop(timer);
  profiler.record(static_cast<BrickId>(200), 10);
  EXPECT_EQ(profiler.misuse_count(ProfilerMisuse::InvalidBrickId), 2u);
  EXPECT_EQ(profiler.total_ns(), 0u);
  EXPECT_THROW((void)profiler.brick_stats(BrickId::COUNT), InvalidArgument);
  EXPECT_THROW(profiler.set_budget(BrickId::COUNT, TokenBudget{}), InvalidArgument);
}

TEST(BrickProfilerMisuse, LayerMisuseIsAStateError) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Deferred));
  EXPECT_THROW(profiler.end_layer(), StateError);
  profiler.begin_layer(1);
  EXPECT_THROW(profiler.begin_layer(2), StateError);
  run(profiler, clock, BrickId::RmsNorm, 10);
  profiler.end_layer();
  EXPECT_THROW(profiler.end_layer(), StateError);
  EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 1u);
  EXPECT_EQ(profiler.layer_stats().count, 1u);
}

TEST(BrickProfilerMisuse, UnknownAndEmptyNamesAreInvalidArguments) {
  BrickProfiler profiler;
  EXPECT_THROW((void)profiler.stats("never_recorded"), InvalidArgument);
  EXPECT_THROW((void)profiler.start(""), InvalidArgument);
  EXPECT_FALSE(parse_sync_mode("lazy").has_value());
  EXPECT_EQ(parse_sync_mode("Deferred"), SyncMode::Deferred);
  EXPECT_EQ(parse_sync_mode("EAGER"), SyncMode::Eager);
  EXPECT_THROW(BrickProfiler(ProfilerOptions{.clock = ClockSource::Manual}), InvalidArgument);
}

// ClockSource(77) used to fall through to the manual clock, a null pointer: SIGSEGV.
TEST(BrickProfilerMisuse, EnumValuesOutsideTheirRangeAreInvalidArguments) {
  EXPECT_THROW(BrickProfiler(ProfilerOptions{.clock = static_cast<ClockSource>(77)}), InvalidArgument);
  EXPECT_THROW(BrickProfiler(ProfilerOptions{.sync_mode = static_cast<SyncMode>(5)}), InvalidArgument);
  BrickProfiler profiler(ProfilerOptions{.clock = ClockSource::SteadyClock, .sync_mode = SyncMode::Deferred});
  EXPECT_THROW(profiler.set_sync_mode(static_cast<SyncMode>(5)), InvalidArgument);
  EXPECT_EQ(profiler.sync_mode(), SyncMode::Deferred);
}

TEST(BrickProfiler, ClockIsTscWhenInvariantElseSteadyClock) {
  BrickProfiler profiler;
  EXPECT_EQ(profiler.clock_source(), default_clock_source());
  if (profiler.clock_source() == ClockSource::Tsc) {
    EXPECT_GT(profiler.ns_per_tick(), 0.01);  // below 100 GHz
    EXPECT_LT(profiler.ns_per_tick(), 10.0);  // above 100 MHz
  } else {
    EXPECT_DOUBLE_EQ(profiler.ns_per_tick(), 1.0);
  }
  EXPECT_NE(
      profiler.summary().find(std::string("clock ") + std::string(name(profiler.clock_source()))),
      std::string::npos);
}

TEST(BrickProfiler, TscConversionAgreesWithSteadyClock) {
  if (default_clock_source() != ClockSource::Tsc) GTEST_SKIP() << "no invariant TSC";
  const TickConverter converter(tsc_ns_per_tick());
  const std::uint64_t steady_begin = read_steady_clock_ns();
  const std::uint64_t tsc_begin = __rdtsc();
  while (read_steady_clock_ns() - steady_begin < 20'000'000) {
  }
  const std::uint64_t tsc_ns = converter.to_ns(__rdtsc() - tsc_begin);
  const std::uint64_t steady_ns = read_steady_clock_ns() - steady_begin;
  EXPECT_NEAR(static_cast<double>(tsc_ns), static_cast<double>(steady_ns),
              0.01 * static_cast<double>(steady_ns));
}

// Several threads record at once while another reads; the totals come out exact.
TEST(BrickProfilerThreads, ConcurrentRecordingGivesExactTotals) {
  constexpr int kThreads = 6;
  constexpr int kIterations = 20000;
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    BrickProfiler profiler(ProfilerOptions{
        .clock = ClockSource::SteadyClock, .sync_mode = mode, .trace_capacity_per_thread = 1000});
    std::atomic<bool> done{false};
    std::thread reader([&] {
      while (!done.load()) {
        const BrickStats stats = profiler.brick_stats(BrickId::QkvProjection);
        EXPECT_LE(stats.count, std::uint64_t{kThreads} * kIterations);
        (void)profiler.total_ns();
        (void)profiler.trace_event_count();
      }
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back([&, t] {
        profiler.set_thread_name("worker " + std::to_string(t));
        for (int i = 0; i < kIterations; ++i) {
          if (i % 100 == 0) profiler.begin_layer(static_cast<std::uint32_t>(i / 100));
          ProfileTimer timer = profiler.start(BrickId::QkvProjection);
          profiler.stop(timer, 2, 10, 20);
          profiler.record(BrickId::Sampling, 3, 1);
          profiler.add_tokens(1);
          if (i % 100 == 99) profiler.end_layer();
        }
      });
    }
    for (auto& worker : workers) worker.join();
    done = true;
    reader.join();
    const BrickStats qkv = profiler.brick_stats(BrickId::QkvProjection);
    EXPECT_EQ(qkv.count, std::uint64_t{kThreads} * kIterations);
    EXPECT_EQ(qkv.elements, 2 * qkv.count);
    EXPECT_EQ(qkv.bytes, 10 * qkv.count);
    EXPECT_EQ(qkv.flops, 20 * qkv.count);
    EXPECT_EQ(qkv.histogram.total_count(), qkv.count);
    const BrickStats sampling = profiler.brick_stats(BrickId::Sampling);
    EXPECT_EQ(sampling.count, std::uint64_t{kThreads} * kIterations);
    EXPECT_EQ(sampling.total_ns, 3 * sampling.count);
    EXPECT_EQ(profiler.total_tokens(), std::uint64_t{kThreads} * kIterations);
    EXPECT_EQ(profiler.layer_stats().count, std::uint64_t{kThreads} * kIterations / 100);
    EXPECT_EQ(profiler.trace_event_count(), std::uint64_t{kThreads} * 1000);
  }
}

}  // namespace
}  // namespace brick
