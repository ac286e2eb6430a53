// The cost of one ModelTracer call per trace type, on a 7B-class model's sizes: hidden 4096,
// vocabulary 32000, attention over 2048 positions (one call per head; a layer of 32 heads costs 32
// of them). BM_TensorStatsBaseline is a plain double-precision sum over the same 4096 floats: the
// floor any one-pass statistic pays.
//
// BM_GenerationTraced: the workload of `brick run` (the default model, a 5-token prompt and 32
// generated tokens, greedy) traced into a JSON Lines file at each level, alternated with the same
// generation untraced; the overhead is of the medians of the generations' own times (prompt,
// decode and sampling, as brick run reports them), and file_ms the median time to create the
// trace file and commit it (once per run: fsync and rename).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_model.hpp"
#include "benchmark_defaults.hpp"
#include "brick/model/generation.hpp"
#include "brick/model/llama_decoder.hpp"
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

// One generation of the workload; its time from the prompt to the last token chosen, in ms.
double generation_ms(model::LlamaDecoder& decoder, trace::ModelTracer* tracer) {
  decoder.reset();
  decoder.set_tracer(tracer);
  model::GenerationParams params;
  params.n_predict = 32;
  const std::vector<model::TokenId> prompt = {1, 9038, 2501, 263, 931};
  const auto generation = model::generate(decoder, prompt, params);
  if (!generation) throw std::runtime_error("the generation failed");
  const model::GenerationTimings& t = generation->timings;
  return t.prompt_ms + t.decode_ms + t.sample_ms;
}

void BM_GenerationTraced(benchmark::State& state) {
  const auto level = static_cast<TraceLevel>(state.range(0));
  const model::LlamaModel& m = bench::bench_model(model::SyntheticModelSpec::preset("small"));
  ThreadPool pool(2);
  model::LlamaOptions options;
  options.n_ctx = 64;
  model::LlamaDecoder plain(m.config(), m.weights(), pool, options), traced(m.config(), m.weights(), pool, options);
  const std::filesystem::path file = std::filesystem::path(BRICK_BENCH_DIR) / "generation-trace.jsonl";
  std::vector<double> plain_ms, traced_ms, file_ms;
  std::uint64_t records = 0;
  for (auto _ : state) {
    TraceConfig config;
    config.level = level;
    ModelTracer tracer(config);
    const auto run_traced = [&] {
      using Clock = std::chrono::steady_clock;
      const auto begin = Clock::now();
      tracer.open_stream(file);
      const auto opened = Clock::now();
      traced_ms.push_back(generation_ms(traced, &tracer));
      const auto closing = Clock::now();
      tracer.close_stream();
      file_ms.push_back(std::chrono::duration<double, std::milli>(opened - begin + Clock::now() - closing).count());
    };
    if (plain_ms.size() % 2 == 0) {
      plain_ms.push_back(generation_ms(plain, nullptr));
      run_traced();
    } else {
      run_traced();
      plain_ms.push_back(generation_ms(plain, nullptr));
    }
    records = tracer.summary().recorded_total();
  }
  const double p = bench::median(plain_ms);
  const double t = bench::median(traced_ms);
  state.counters["plain_ms"] = p;
  state.counters["traced_ms"] = t;
  state.counters["overhead_pct"] = 100.0 * (t - p) / p;
  state.counters["file_ms"] = bench::median(file_ms);
  state.counters["records"] = static_cast<double>(records);
  state.SetLabel(std::string(name(level)));
}
BENCHMARK(BM_GenerationTraced)
    ->ArgName("level")
    ->Arg(static_cast<int>(TraceLevel::Lightweight))
    ->Arg(static_cast<int>(TraceLevel::Full))
    ->Iterations(31)
    ->Unit(benchmark::kMillisecond);

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
