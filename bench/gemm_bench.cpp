// The quantized GEMM of prompt processing, Brick against ggml side by side: Y = W X for a batch of
// tokens, W of 4096x4096 or 14336x4096 (a llama-8B attention and FFN projection), batches of 32
// and 512 tokens, at 1 and 2 threads. Brick runs a ProjectionOp on the batch (x quantized once per
// token, then one GEMM pass); ggml runs ggml_mul_mat through its CPU backend with the weights in
// the CPU_REPACK buffer where ggml supports it, as llama.cpp loads a model (its prompt path).
// Each benchmark also reports the mat-vec loop it replaces at batch 32 (one matvec per token).
//
//   brick_gemm_bench [--benchmark_filter=q4k] [--benchmark_repetitions=N]
//
// Ends with a table of medians: GFLOP/s of each engine, their ratio, and Brick's fraction of the
// machine's integer dot-product peak (int8_peak_probe.hpp) for the instructions its GEMM kernel runs.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "brick/core/brick_id.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/projection_op.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/weight_matrices.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"
#include "benchmark_defaults.hpp"
#include "int8_peak_probe.hpp"

namespace {

using namespace brick;
using brick::test::GgmlBackendMatVec;
using brick::test::GgmlOracle;

constexpr std::size_t kCols = 4096;
constexpr std::size_t kShapes[] = {4096, 14336};
constexpr std::size_t kBatches[] = {32, 512};
// Batches under a micro-kernel's tile of tokens, 4096x4096 only: where the GEMM hands over to a
// mat-vec per token (matvec.hpp).
constexpr std::size_t kSmallBatches[] = {2, 4, 6, 8, 12, 16};
constexpr quant::TensorType kTypes[] = {quant::TensorType::Q4_K, quant::TensorType::Q5_K, quant::TensorType::Q6_K,
                                        quant::TensorType::Q8_0};

const GgmlOracle& oracle() { return GgmlOracle::load(); }

ThreadPool& pool(int threads) {
  static ThreadPool one(1);
  static ThreadPool two(2);
  return threads == 1 ? one : two;
}

// One matrix per type and shape, made on first use and kept for the run.
const test::OwnedMatrix& matrix(quant::TensorType type, std::size_t rows) {
  static std::map<std::pair<quant::TensorType, std::size_t>, test::OwnedMatrix> matrices;
  auto it = matrices.find({type, rows});
  if (it == matrices.end()) it = matrices.emplace(std::pair{type, rows}, test::weight_matrix(type, rows, kCols, rows)).first;
  return it->second;
}

const std::vector<float>& input(std::size_t tokens) {
  static std::map<std::size_t, std::vector<float>> inputs;
  auto it = inputs.find(tokens);
  if (it == inputs.end()) it = inputs.emplace(tokens, test::normal(tokens * kCols, 7 + tokens)).first;
  return it->second;
}

double flops(std::size_t rows, std::size_t tokens) {
  return 2.0 * static_cast<double>(rows) * static_cast<double>(kCols) * static_cast<double>(tokens);
}

void report(benchmark::State& state, std::size_t rows, std::size_t tokens) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops(rows, tokens) * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void gemm_brick(benchmark::State& state, quant::TensorType type, std::size_t rows, std::size_t tokens) {
  const test::OwnedMatrix& w = matrix(type, rows);
  const quant::ProjectionOp op(BrickId::OutputProjection, "gemm", w.view(), pool(static_cast<int>(state.range(0))));
  std::vector<float> out(rows * tokens);
  for (auto _ : state) {
    op.run({input(tokens), tokens}, out, Backend::Auto);
    benchmark::ClobberMemory();
  }
  report(state, rows, tokens);
}

// The layout the AVX2 kernels take `type` repacked into (weight_layout.hpp): sub-block interleaved
// k-quants, grouped Q8_0; nothing for the other types.
std::optional<quant::WeightLayout> repacked_layout(quant::TensorType type) {
  for (const quant::WeightLayout layout : {quant::WeightLayout::SubBlockInterleaved, quant::WeightLayout::GroupedBlocks}) {
    if (quant::block_bytes(type, layout)) return layout;
  }
  return std::nullopt;
}

// The matrix of `type` and `rows` in its repacked layout.
const quant::RepackedMatrix& repacked_matrix(quant::TensorType type, std::size_t rows) {
  static std::map<std::pair<quant::TensorType, std::size_t>, quant::RepackedMatrix> matrices;
  auto it = matrices.find({type, rows});
  if (it == matrices.end()) {
    it = matrices.emplace(std::pair{type, rows}, quant::RepackedMatrix(matrix(type, rows).view(), *repacked_layout(type)))
             .first;
  }
  return it->second;
}

void gemm_brick_repacked(benchmark::State& state, quant::TensorType type, std::size_t rows, std::size_t tokens) {
  const quant::ProjectionOp op(BrickId::OutputProjection, "gemm", repacked_matrix(type, rows).matrix(),
                               pool(static_cast<int>(state.range(0))));
  std::vector<float> out(rows * tokens);
  for (auto _ : state) {
    op.run({input(tokens), tokens}, out, Backend::Auto);
    benchmark::ClobberMemory();
  }
  report(state, rows, tokens);
}

void matvec_loop_brick(benchmark::State& state, quant::TensorType type, std::size_t rows, std::size_t tokens) {
  const test::OwnedMatrix& w = matrix(type, rows);
  const std::vector<float>& x = input(tokens);
  std::vector<float> out(rows * tokens);
  ThreadPool& p = pool(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (std::size_t t = 0; t < tokens; ++t) {
      quant::matvec(w.view(), std::span(x).subspan(t * kCols, kCols), std::span(out).subspan(t * rows, rows), p);
    }
    benchmark::ClobberMemory();
  }
  report(state, rows, tokens);
}

void gemm_ggml(benchmark::State& state, quant::TensorType type, std::size_t rows, std::size_t tokens) {
  const test::OwnedMatrix& w = matrix(type, rows);
  GgmlBackendMatVec ggml(oracle(), w.ggml_type(), rows, kCols, w.bytes, true, tokens);
  const std::vector<float>& x = input(tokens);
  std::copy(x.begin(), x.end(), ggml.input().begin());
  for (auto _ : state) ggml.compute(static_cast<int>(state.range(0)));
  state.SetLabel(ggml.weight_buffer_type());
  report(state, rows, tokens);
}

std::string key(std::string_view engine, quant::TensorType type, std::size_t rows, std::size_t tokens) {
  return fmt::format("gemm/{}/{}x{}/batch{}/{}", quant::name(type), rows, kCols, tokens, engine);
}

void register_benchmarks() {
  for (const quant::TensorType type : kTypes) {
    for (const std::size_t rows : kShapes) {
      for (const std::size_t tokens : kBatches) {
        const auto add = [&](std::string_view engine, auto fn) {
          benchmark::RegisterBenchmark(key(engine, type, rows, tokens).c_str(),
                                       [=](benchmark::State& s) { fn(s, type, rows, tokens); })
              ->Arg(1)
              ->Arg(2)
              ->UseRealTime()
              ->MinTime(0.2)
              ->Unit(benchmark::kMillisecond);
        };
        add("brick", gemm_brick);
        if (repacked_layout(type)) add("brick_repacked", gemm_brick_repacked);
        add("ggml", gemm_ggml);
        if (tokens == kBatches[0]) add("brick_matvec_loop", matvec_loop_brick);
      }
    }
    for (const std::size_t tokens : kSmallBatches) {
      for (const auto& run : {std::pair{"brick", &gemm_brick}, std::pair{"brick_matvec_loop", &matvec_loop_brick}}) {
        const auto fn = run.second;
        benchmark::RegisterBenchmark(key(run.first, type, kShapes[0], tokens).c_str(),
                                     [=](benchmark::State& s) { fn(s, type, kShapes[0], tokens); })
            ->Arg(1)
            ->UseRealTime()
            ->MinTime(0.1)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

// Every repetition's wall time per iteration, by benchmark name with its thread count.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      times_[run.run_name.function_name + "/" + run.run_name.args].push_back(run.real_accumulated_time /
                                                                              static_cast<double>(run.iterations));
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Median seconds per iteration, 0 when the benchmark did not run.
  double seconds(const std::string& name) const {
    const auto it = times_.find(name);
    if (it == times_.end() || it->second.empty()) return 0.0;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }

 private:
  std::map<std::string, std::vector<double>> times_;
};

// The int8 instructions the GEMM kernel Brick runs for `type` multiplies with.
bench::Int8Instructions gemm_instructions(quant::TensorType type) {
  const std::string_view kernel = quant::dot_kernel_name(type, Backend::Auto);
  if (kernel.ends_with("_avx512vnni") || kernel.ends_with("_avx512gfni")) return bench::Int8Instructions::Avx512Vnni;
  if (kernel.ends_with("_avxvnni")) return bench::Int8Instructions::AvxVnni;
  return type == quant::TensorType::Q8_0 ? bench::Int8Instructions::Avx2Signed : bench::Int8Instructions::Avx2;
}

void print_summary(const Collector& c) {
  // GOPS per instruction set and thread count, for the instruction sets the types' kernels use.
  std::map<std::pair<bench::Int8Instructions, int>, double> peaks;
  for (const quant::TensorType type : kTypes) {
    for (const int threads : {1, 2}) {
      const auto key = std::pair(gemm_instructions(type), threads);
      if (!peaks.contains(key)) peaks[key] = bench::int8_peak_gops(key.first, pool(threads)).value_or(0.0);
    }
  }
  fmt::print("\n## GEMM: medians, ggml {} ({}), Brick {}\n\n", oracle().version(), oracle().cpu_variant(),
             name(resolve(Backend::Auto)));
  for (const auto& [key, gops] : peaks) {
    if (key.second == 1) {
      fmt::print("Integer dot-product peak ({}): {:.0f} GOPS at 1 thread, {:.0f} at 2.\n", describe(key.first), gops,
                 peaks[{key.first, 2}]);
    }
  }
  fmt::print("\n");
  fmt::print("| weights | batch | threads | brick GFLOP/s | ggml GFLOP/s | brick / ggml | brick / its mat-vec loop | brick of int8 peak "
             "| repacked / ggml |\n"
             "|---|---|---|---|---|---|---|---|---|\n");
  for (const quant::TensorType type : kTypes) {
    for (const std::size_t rows : kShapes) {
      for (const std::size_t tokens : kBatches) {
        for (const int threads : {1, 2}) {
          const auto time = [&](std::string_view engine) {
            return c.seconds(fmt::format("{}/{}", key(engine, type, rows, tokens), threads));
          };
          const double ours = time("brick");
          const double ggml = time("ggml");
          if (ours == 0.0 || ggml == 0.0) continue;
          const double loop = time("brick_matvec_loop");
          const double repacked = time("brick_repacked");
          const double gflops = flops(rows, tokens) / ours / 1e9;
          const double peak = peaks[{gemm_instructions(type), threads}];
          fmt::print("| {} {}x{} | {} | {} | {:.0f} | {:.0f} | {:.2f}x | {} | {} | {} |\n", quant::name(type), rows, kCols,
                     tokens, threads, gflops, flops(rows, tokens) / ggml / 1e9, ggml / ours,
                     loop > 0.0 ? fmt::format("{:.2f}x", loop / ours) : std::string("-"),
                     peak > 0.0 ? fmt::format("{:.0f}%", 100.0 * gflops / peak) : std::string("-"),
                     repacked > 0.0 ? fmt::format("{:.2f}x", ggml / repacked) : std::string("-"));
        }
      }
    }
  }
  fmt::print("\n| small batch, {}x{}, 1 thread: brick / its mat-vec loop |", kShapes[0], kCols);
  for (const std::size_t tokens : kSmallBatches) fmt::print(" {} |", tokens);
  fmt::print("\n|---|");
  for (std::size_t i = 0; i < std::size(kSmallBatches); ++i) fmt::print("---|");
  fmt::print("\n");
  for (const quant::TensorType type : kTypes) {
    fmt::print("| {} |", quant::name(type));
    for (const std::size_t tokens : kSmallBatches) {
      const double ours = c.seconds(fmt::format("{}/1", key("brick", type, kShapes[0], tokens)));
      const double loop = c.seconds(fmt::format("{}/1", key("brick_matvec_loop", type, kShapes[0], tokens)));
      fmt::print(" {} |", ours > 0.0 && loop > 0.0 ? fmt::format("{:.2f}x", loop / ours) : std::string("-"));
    }
    fmt::print("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::vector<std::string> added;
  brick::bench::add_comparison_defaults(args, added, 3);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
  fmt::print("ggml oracle: {}\n", oracle().describe());
  register_benchmarks();
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  print_summary(collector);
  benchmark::Shutdown();
  return 0;
}
