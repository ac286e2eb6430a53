// What profiling costs the `brick run` workload: one decoder-layer token with no observer, with a
// disabled profiler, and with the profiler in Eager and in Deferred mode, side by side in one run.
// Run with --benchmark_enable_random_interleaving=true and repetitions so that the machine's noise
// spreads over all four alike; compare medians.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "brick/model/decoder_layer.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"

namespace {

using brick::model::DecoderShape;

enum class Profiling { None, Disabled, Eager, Deferred };

// Small enough that per-brick costs show: 59 bricks a token, most of them tiny.
const DecoderShape kShapes[] = {
    {2048, 16, 4, 5632, 512},  // the `brick run` default
    {256, 16, 4, 704, 64},     // tiny bricks: the worst case for per-brick overhead
};

void decoder_token(benchmark::State& state, Profiling profiling) {
  const DecoderShape& shape = kShapes[state.range(0)];
  const brick::model::SyntheticWeights weights(shape, 42);
  brick::model::DecoderLayer layer(shape, weights.view(), {});
  brick::ProfilerOptions options;
  options.enabled = profiling != Profiling::Disabled;
  options.sync_mode =
      profiling == Profiling::Deferred ? brick::SyncMode::Deferred : brick::SyncMode::Eager;
  brick::BrickProfiler profiler(options);
  brick::ProfilingObserver observer(profiler);
  brick::LayerObserver* hooks = profiling == Profiling::None ? nullptr : &observer;
  std::vector<float> x(shape.hidden, 0.25f);
  std::size_t position = 0;
  for (auto _ : state) {
    auto report = layer.step(x, position++ % 4096, hooks);
    benchmark::DoNotOptimize(report);
  }
  state.counters["bricks"] = static_cast<double>(layer.brick_count());
  state.SetLabel(fmt::format("hidden {}", shape.hidden));
}

}  // namespace

BENCHMARK_CAPTURE(decoder_token, no_observer, Profiling::None)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(decoder_token, profiler_disabled, Profiling::Disabled)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(decoder_token, profiler_eager, Profiling::Eager)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(decoder_token, profiler_deferred, Profiling::Deferred)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
