// The cost of profiling one brick, side by side with the clock reads it is built on:
//   raw TSC pair       two rdtsc reads: the floor for any TSC-based timer
//   steady_clock pair  two std::chrono::steady_clock::now() calls
//   enabled pair       start(BrickId) + stop(timer, elements) recorded, Eager and Deferred (Deferred
//                      includes its share of end_layer() resolution, 64 bricks per layer; the
//                      HotPath variant times start/stop alone)
//   disabled pair      start + stop on a disabled profiler (no clock read)
// Targets: enabled pair <= 2 x raw TSC pair + 2 ns; disabled pair < 1 ns.
#include <benchmark/benchmark.h>

#include <chrono>

#include "brick/profile/profiler.hpp"

namespace brick {
namespace {

constexpr int kBricksPerLayer = 64;

void BM_RawTscPair(benchmark::State& state) {
  for (auto _ : state) {
    const std::uint64_t begin = __rdtsc();
    benchmark::DoNotOptimize(begin);
    const std::uint64_t end = __rdtsc();
    benchmark::DoNotOptimize(end);
  }
}
BENCHMARK(BM_RawTscPair);

void BM_SteadyClockPair(benchmark::State& state) {
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(begin);
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(end);
  }
}
BENCHMARK(BM_SteadyClockPair);

void BM_ProfilerPairEager(benchmark::State& state) {
  BrickProfiler profiler(ProfilerOptions{.sync_mode = SyncMode::Eager});
  for (auto _ : state) {
    ProfileTimer timer = profiler.start(BrickId::QkvProjection);
    profiler.stop(timer, 1);
  }
  state.counters["clock_is_tsc"] = profiler.clock_source() == ClockSource::Tsc ? 1 : 0;
}
BENCHMARK(BM_ProfilerPairEager);

void BM_ProfilerPairDeferred(benchmark::State& state) {
  BrickProfiler profiler(ProfilerOptions{.sync_mode = SyncMode::Deferred});
  std::uint32_t layer = 0;
  int in_layer = 0;
  profiler.begin_layer(layer);
  for (auto _ : state) {
    ProfileTimer timer = profiler.start(BrickId::QkvProjection);
    profiler.stop(timer, 1);
    if (++in_layer == kBricksPerLayer) {
      profiler.end_layer();
      profiler.begin_layer(++layer);
      in_layer = 0;
    }
  }
  profiler.end_layer();
}
BENCHMARK(BM_ProfilerPairDeferred);

// Deferred's hot path alone: resolution happens outside the timed region, once per 64Ki bricks.
void BM_ProfilerPairDeferredHotPath(benchmark::State& state) {
  constexpr int kBricks = 1 << 16;
  BrickProfiler profiler(ProfilerOptions{.sync_mode = SyncMode::Deferred, .deferred_capacity_per_thread = kBricks});
  std::uint32_t layer = 0;
  int in_layer = 0;
  profiler.begin_layer(layer);
  for (auto _ : state) {
    ProfileTimer timer = profiler.start(BrickId::QkvProjection);
    profiler.stop(timer, 1);
    if (++in_layer == kBricks) {
      state.PauseTiming();
      profiler.end_layer();
      profiler.begin_layer(++layer);
      in_layer = 0;
      state.ResumeTiming();
    }
  }
  profiler.end_layer();
}
BENCHMARK(BM_ProfilerPairDeferredHotPath);

void BM_ProfilerPairDisabled(benchmark::State& state) {
  BrickProfiler profiler(ProfilerOptions{.enabled = false});
  for (auto _ : state) {
    ProfileTimer timer = profiler.start(BrickId::QkvProjection);
    profiler.stop(timer, 1);
  }
}
BENCHMARK(BM_ProfilerPairDisabled);

// Recording from several threads at once: per-thread shards, so the per-pair cost should not grow.
void BM_ProfilerPairEagerThreads(benchmark::State& state) {
  static BrickProfiler* profiler = nullptr;
  if (state.thread_index() == 0) profiler = new BrickProfiler(ProfilerOptions{.sync_mode = SyncMode::Eager});
  for (auto _ : state) {
    ProfileTimer timer = profiler->start(BrickId::QkvProjection);
    profiler->stop(timer, 1);
  }
  if (state.thread_index() == 0) {
    delete profiler;
    profiler = nullptr;
  }
}
BENCHMARK(BM_ProfilerPairEagerThreads)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace brick

BENCHMARK_MAIN();
