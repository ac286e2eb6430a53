// The cost of one ModelTracer call per trace type, on a 7B-class model's sizes: hidden 4096,
// vocabulary 32000, attention over 2048 positions (one call per head; a layer of 32 heads costs 32
// of them). BM_TensorStatsBaseline is a plain double-precision sum over the same 4096 floats: the
// floor any one-pass statistic pays.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "benchmark_defaults.hpp"
#include "brick/trace/model_tracer.hpp"

namespace brick::trace {
namespace {

constexpr std::size_t kHidden = 4096;
constexpr std::size_t kVocab = 32000;
constexpr std::size_t kPositions = 2048;

std::vector<float> values(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(0.001f * static_cast<float>(i)) * 2.0f;
  return x;
}

TraceConfig full() {
  TraceConfig config;
  config.level = TraceLevel::Full;
  config.max_records = 1024;
  return config;
}

void BM_TensorStatsBaseline(benchmark::State& state) {
  const std::vector<float> x = values(kHidden);
  for (auto _ : state) {
    double sum = 0.0;
    for (const float v : x) sum += v;
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_TensorStatsBaseline);

void BM_TensorStats(benchmark::State& state) {
  const std::vector<float> x = values(kHidden);
  for (auto _ : state) benchmark::DoNotOptimize(compute_tensor_stats(x));
}
BENCHMARK(BM_TensorStats);

void BM_RecordActivation(benchmark::State& state) {
  ModelTracer tracer;
  const std::vector<float> x = values(kHidden);
  const std::vector<float> r = values(kHidden);
  const bool residual = state.range(0) != 0;
  tracer.begin_forward(0);
  for (auto _ : state) {
    tracer.record_activation(0, ActivationPoint::AfterFfn, x, residual ? std::span<const float>(r) : std::span<const float>());
  }
  tracer.end_forward();
}
BENCHMARK(BM_RecordActivation)->ArgName("residual")->Arg(0)->Arg(1);

void BM_RecordActivationOff(benchmark::State& state) {
  ModelTracer tracer([] {
    TraceConfig config;
    config.level = TraceLevel::Off;
    return config;
  }());
  const std::vector<float> x = values(kHidden);
  for (auto _ : state) tracer.record_activation(0, ActivationPoint::AfterFfn, x);
}
BENCHMARK(BM_RecordActivationOff);

void BM_RecordAttention(benchmark::State& state) {
  ModelTracer tracer(full());
  std::vector<float> w(kPositions, 0.5f / kPositions);
  w[0] += 0.5f;
  tracer.begin_forward(0);
  for (auto _ : state) tracer.record_attention(0, 0, 2047, w);
  tracer.end_forward();
}
BENCHMARK(BM_RecordAttention);

void BM_RecordLogits(benchmark::State& state) {
  ModelTracer tracer(full());
  const std::vector<float> logits = values(kVocab);
  tracer.begin_forward(0);
  std::uint64_t step = 0;
  for (auto _ : state) tracer.record_logits(step++, logits, 17);
  tracer.end_forward();
}
BENCHMARK(BM_RecordLogits);

void BM_RecordLayerLogits(benchmark::State& state) {
  ModelTracer tracer(full());
  const std::vector<float> logits = values(kVocab);
  tracer.begin_forward(0);
  std::uint32_t layer = 0;
  for (auto _ : state) tracer.record_layer_logits(0, layer++ % 32, logits, 17);
  tracer.end_forward();
}
BENCHMARK(BM_RecordLayerLogits);

void BM_RecordQuantError(benchmark::State& state) {
  ModelTracer tracer(full());
  const std::vector<float> ref = values(kHidden);
  std::vector<float> q(ref);
  for (float& v : q) v *= 1.001f;
  for (auto _ : state) tracer.record_quant_error("FfnDown", 0, q, ref);
}
BENCHMARK(BM_RecordQuantError);

void BM_RecordKvCache(benchmark::State& state) {
  ModelTracer tracer(full());
  std::uint64_t step = 0;
  for (auto _ : state) tracer.record_kv_cache(KvCacheState{step++, 4096, 1000, 1000, 0, 1, 3096, 0.0});
}
BENCHMARK(BM_RecordKvCache);

}  // namespace
}  // namespace brick::trace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::vector<std::string> storage;
  brick::bench::add_comparison_defaults(args, storage, 5);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
