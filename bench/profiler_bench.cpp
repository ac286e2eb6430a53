// The cost of profiling one brick, side by side with the clock reads it is built on:
//   raw TSC pair       two rdtsc reads: the floor for any TSC-based timer
//   steady_clock pair  two std::chrono::steady_clock::now() calls
//   enabled pair       start(BrickId) + stop(timer, elements) recorded, Eager and Deferred (Deferred
//                      includes its share of end_layer() resolution, 64 bricks per layer; the
//                      HotPath variant times start/stop alone)
//   disabled pair      start + stop on a disabled profiler (no clock read)
// Targets: enabled pair <= 2 x raw TSC pair + 2 ns; disabled pair < 1 ns.
// BM_DecoderStepOverhead runs the `brick run` workload (one decoder layer step, checks "cheap"),
// alternating steps without an observer and steps through a ProfilingObserver (disabled, Eager,
// Deferred); overhead_pct compares their median times (targets: Deferred < 1%, Eager < 5%).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "brick/model/decoder_layer.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"

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

enum class Profiling { Disabled, Eager, Deferred };

std::uint64_t median(std::vector<std::uint64_t>& values) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

// Alternates unprofiled and profiled steps of the same layer (swapping their order every iteration)
// and compares the median step times, so a load change or a preemption hits both sides alike.
void BM_DecoderStepOverhead(benchmark::State& state) {
  const auto profiling = static_cast<Profiling>(state.range(0));
  model::DecoderShape shape;
  shape.hidden = 512;
  shape.n_heads = 8;
  shape.n_kv_heads = 4;
  shape.ffn = 1408;
  shape.context = 256;
  const model::SyntheticWeights weights(shape, 1);
  model::DecoderLayer layer(shape, weights.view(), model::DecoderOptions{});
  BrickProfiler profiler(ProfilerOptions{
      .sync_mode = profiling == Profiling::Deferred ? SyncMode::Deferred : SyncMode::Eager,
      .enabled = profiling != Profiling::Disabled});
  ProfilingObserver observer(profiler);
  const std::vector<float> x(shape.hidden, 0.25f);
  std::vector<std::uint64_t> plain_ticks, profiled_ticks;
  plain_ticks.reserve(static_cast<std::size_t>(state.max_iterations));
  profiled_ticks.reserve(static_cast<std::size_t>(state.max_iterations));
  std::size_t position = 0;
  const auto timed_step = [&](LayerObserver* hook) {
    const std::uint64_t begin = __rdtsc();
    auto report = layer.step(x, position % shape.context, hook, 0);
    benchmark::DoNotOptimize(report);
    return __rdtsc() - begin;
  };
  for (auto _ : state) {
    if (position % 2 == 0) {
      plain_ticks.push_back(timed_step(nullptr));
      profiled_ticks.push_back(timed_step(&observer));
    } else {
      profiled_ticks.push_back(timed_step(&observer));
      plain_ticks.push_back(timed_step(nullptr));
    }
    ++position;
  }
  const double plain = static_cast<double>(median(plain_ticks));
  const double profiled = static_cast<double>(median(profiled_ticks));
  state.counters["overhead_pct"] = 100.0 * (profiled - plain) / plain;
  state.counters["step_us"] = plain * tsc_ns_per_tick() / 1e3;
  state.counters["bricks_per_step"] = static_cast<double>(layer.brick_count());
  constexpr const char* kLabels[] = {"profiler disabled", "eager", "deferred"};
  state.SetLabel(kLabels[state.range(0)]);
}
BENCHMARK(BM_DecoderStepOverhead)->ArgName("profiling")->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace brick

BENCHMARK_MAIN();
