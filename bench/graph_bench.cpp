// The cost of the execution graph and of kernel checksums:
//   hook off          a KernelScope with no recorder installed: what every inner-kernel hook costs a
//                     run that records nothing (a thread-local load and a branch)
//   node              one brick (begin and end with its report) and one kernel recorded
//   checksum          XXH3-64 of a 16 KiB output (target: well under 1 us), its numeric summary, and
//                     the whole ChecksumLog::record (hash, summary, key)
//   queries           children, parent and out-edges of random nodes, and the critical path, on a
//                     100,000-node graph shaped like a decoder run
//   decoder step      a LlamaDecoder step (4 layers, 1024 wide, Q4_K_M) with and without a
//                     recorder, alternated, medians compared (overhead_pct), and the checksum log's
//                     size per step
#include <benchmark/benchmark.h>
#include <x86intrin.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

#include "bench_model.hpp"
#include "brick/graph/critical_path.hpp"
#include "brick/graph/graph_recorder.hpp"
#include "brick/model/llama_decoder.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/profile/profile_clock.hpp"

namespace brick::graph {
namespace {

void BM_KernelScopeOff(benchmark::State& state) {
  for (auto _ : state) {
    KernelScope scope("quantize_q8k", Backend::Avx2);
    scope.set_work(4096, 16384.0, 20000.0);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_KernelScopeOff);

// Nodes per iteration: one brick with one kernel in it. The graph is emptied (untimed) before it
// reaches its limit, so every node is really added.
void BM_RecordBrickWithKernel(benchmark::State& state) {
  GraphRecorder recorder;
  RunReport report;
  report.brick = "blk.3.ffn_down";
  report.metrics.tokens = 1;
  report.metrics.flops = 1e7;
  report.metrics.bytes = 4e6;
  recorder.on_layer_begin(3);
  for (auto _ : state) {
    recorder.on_brick_begin(BrickId::DownProjection, report.brick);
    recorder.kernel_begin("dot_q4k_q8k_avx2", Backend::Avx2, kernel_clock_ns());
    recorder.kernel_end({4096, 1e7, 4e6}, kernel_clock_ns());
    recorder.on_brick_end(BrickId::DownProjection, report.brick, &report);
    if (recorder.graph().size() + 2 >= recorder.graph().node_limit()) {
      state.PauseTiming();
      recorder.reset();
      recorder.on_layer_begin(3);
      state.ResumeTiming();
    }
  }
  recorder.on_layer_end();
  state.counters["ns_per_node"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate |
                                                                              benchmark::Counter::kInvert);
}
BENCHMARK(BM_RecordBrickWithKernel);

std::vector<float> output_16kib() {
  std::vector<float> values(4096);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : values) v = normal(rng);
  return values;
}

void BM_Xxh3Of16KiB(benchmark::State& state) {
  const std::vector<float> values = output_16kib();
  for (auto _ : state) benchmark::DoNotOptimize(xxh3_64(std::as_bytes(std::span(values))));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 16384);
}
BENCHMARK(BM_Xxh3Of16KiB);

void BM_SummaryOf16KiB(benchmark::State& state) {
  const std::vector<float> values = output_16kib();
  for (auto _ : state) benchmark::DoNotOptimize(summarize(values));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 16384);
}
BENCHMARK(BM_SummaryOf16KiB);

void BM_ChecksumRecord16KiB(benchmark::State& state) {
  const std::vector<float> values = output_16kib();
  ChecksumLog log;
  std::int64_t position = 0;
  for (auto _ : state) {
    log.record("blk.3.ffn_down", 3, position++, values);
    if (log.size() == log.limit()) {
      state.PauseTiming();
      log.clear();
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_ChecksumRecord16KiB);

// A decoder-shaped graph of about 100,000 nodes: 80 layers in sequence, each of 12 bricks in
// sequence, each brick launching a parallel pass of 4 pieces and a join, plus a quantize kernel.
ExecutionGraph decoder_shaped_graph() {
  ExecutionGraph g;
  NodeId previous_layer = kNoNode;
  std::uint64_t clock = 0;
  const auto add = [&](NodeKind kind, std::string_view label, std::int32_t layer, std::uint64_t duration) {
    Node node;
    node.kind = kind;
    node.label = label;
    node.layer = layer;
    node.start_ns = clock;
    node.duration_ns = duration;
    node.flops = 1e6;
    node.bytes = 5e5;
    return g.add_node(node);
  };
  for (std::int32_t layer = 0; g.size() < 100'000; ++layer) {
    const NodeId l = add(NodeKind::Layer, "layer", layer % 80, 12'000);
    g.add_edge(previous_layer, l, EdgeKind::Sequence);
    previous_layer = l;
    NodeId previous_brick = kNoNode;
    for (int b = 0; b < 12; ++b) {
      const NodeId brick = add(NodeKind::Brick, "brick", layer % 80, 1000);
      g.add_edge(l, brick, EdgeKind::Contains);
      g.add_edge(previous_brick, brick, EdgeKind::Sequence);
      previous_brick = brick;
      const NodeId quantize = add(NodeKind::Kernel, "brick/quantize", layer % 80, 50);
      const NodeId pass = add(NodeKind::Kernel, "brick/pass", layer % 80, 900);
      g.add_edge(brick, quantize, EdgeKind::Launches);
      g.add_edge(brick, pass, EdgeKind::Launches);
      g.add_edge(quantize, pass, EdgeKind::Sequence);
      std::vector<NodeId> pieces;
      for (int slot = 0; slot < 4; ++slot) {
        pieces.push_back(add(NodeKind::Kernel, "brick/pass/slot", layer % 80, 800 + 10 * slot));
        g.add_edge(pass, pieces.back(), EdgeKind::Launches);
      }
      const NodeId join = add(NodeKind::Sync, "brick/pass/join", layer % 80, 40);
      g.add_edge(pass, join, EdgeKind::Contains);
      g.add_edge(pieces[0], join, EdgeKind::Sequence);  // the caller's piece, then its wait
      for (std::size_t w = 1; w < pieces.size(); ++w) g.add_edge(pieces[w], join, EdgeKind::DependsOn);
      clock += 1000;
    }
  }
  return g;
}

const ExecutionGraph& big_graph() {
  static const ExecutionGraph graph = decoder_shaped_graph();
  return graph;
}

void BM_QueryChildrenParentEdges(benchmark::State& state) {
  const ExecutionGraph& g = big_graph();
  std::mt19937 rng(1);
  std::uniform_int_distribution<NodeId> pick(0, static_cast<NodeId>(g.size() - 1));
  std::size_t seen = 0;
  for (auto _ : state) {
    const NodeId v = pick(rng);
    seen += g.children(v).size();
    seen += g.parent(v).value_or(0);
    for (const Edge& e : g.out_edges(v)) seen += e.to;
  }
  benchmark::DoNotOptimize(seen);
  state.counters["nodes"] = static_cast<double>(g.size());
}
BENCHMARK(BM_QueryChildrenParentEdges);

void BM_CriticalPath(benchmark::State& state) {
  const ExecutionGraph& g = big_graph();
  for (auto _ : state) benchmark::DoNotOptimize(critical_path(g).length_ns);
  state.counters["nodes"] = static_cast<double>(g.size());
  state.counters["edges"] = static_cast<double>(g.edge_count());
}
BENCHMARK(BM_CriticalPath)->Unit(benchmark::kMillisecond);

const model::LlamaModel& decoder_model() {
  model::SyntheticModelSpec spec = model::SyntheticModelSpec::preset("tiny");
  spec.n_layer = 4;
  spec.n_embd = 1024;
  spec.n_head = 16;
  spec.n_head_kv = 4;
  spec.n_ff = 2816;
  spec.n_vocab = 4096;
  return bench::bench_model(spec);
}

enum class Recording { Nodes, Checksums, NodesAndChecksums };

// Alternates plain and recorded steps of two decoders at the same positions (the order swapped
// every iteration), so that a load change or a preemption hits both alike.
void BM_DecoderStepOverhead(benchmark::State& state) {
  const auto recording = static_cast<Recording>(state.range(0));
  const model::LlamaModel& m = decoder_model();
  ThreadPool pool(2);
  model::LlamaOptions options;
  options.n_ctx = 256;
  model::LlamaDecoder plain(m.config(), m.weights(), pool, options), recorded(m.config(), m.weights(), pool, options);
  GraphRecorder recorder({.record_nodes = recording != Recording::Checksums,
                          .record_checksums = recording != Recording::Nodes});
  std::vector<std::uint64_t> plain_ticks, recorded_ticks;
  std::size_t entries_per_step = 0;
  const auto timed_step = [&](model::LlamaDecoder& decoder, LayerObserver* observer) {
    const std::uint64_t begin = __rdtsc();
    auto logits = decoder.step(static_cast<model::TokenId>(7 + decoder.n_past() % 50), observer);
    benchmark::DoNotOptimize(logits);
    return __rdtsc() - begin;
  };
  for (auto _ : state) {
    if (plain.n_past() + 1 == options.n_ctx) {
      plain.reset();
      recorded.reset();
    }
    const std::size_t before = recorder.checksums().size();
    if (plain.n_past() % 2 == 0) {
      plain_ticks.push_back(timed_step(plain, nullptr));
      recorded_ticks.push_back(timed_step(recorded, &recorder));
    } else {
      recorded_ticks.push_back(timed_step(recorded, &recorder));
      plain_ticks.push_back(timed_step(plain, nullptr));
    }
    entries_per_step = recorder.checksums().size() - before;
    if (recorder.graph().size() > 500'000 || recorder.checksums().size() > 500'000) recorder.reset();
  }
  const double p = static_cast<double>(bench::median(plain_ticks));
  const double r = static_cast<double>(bench::median(recorded_ticks));
  state.counters["overhead_pct"] = 100.0 * (r - p) / p;
  state.counters["step_us"] = p * tsc_ns_per_tick() / 1e3;
  state.counters["checksums_per_step"] = static_cast<double>(entries_per_step);
  constexpr const char* kLabels[] = {"nodes", "checksums", "nodes and checksums"};
  state.SetLabel(kLabels[state.range(0)]);
}
BENCHMARK(BM_DecoderStepOverhead)->ArgName("recording")->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace brick::graph

BENCHMARK_MAIN();
