#pragma once
// A small profile with every section of the report filled, recorded on a manual clock so that its
// numbers are exact, with names that need escaping.
#include <chrono>
#include <string>

#include "brick/graph/execution_graph.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/report/html_report.hpp"
#include "brick/runtime/clock.hpp"

namespace brick::report {

inline constexpr std::string_view kHostileName = "<script>alert('x')</script>&\"name\"";

// Two layers of one token each: the second pass is the one the timeline shows.
inline graph::ExecutionGraph sample_graph() {
  graph::ExecutionGraph g;
  const auto add = [&](graph::NodeKind kind, std::string_view label, std::int32_t layer, std::uint32_t thread,
                       std::uint64_t start, std::uint64_t duration) {
    graph::Node node;
    node.kind = kind;
    node.label = label;
    node.layer = layer;
    node.thread = thread;
    node.start_ns = start;
    node.duration_ns = duration;
    node.elements = 1;
    return g.add_node(node);
  };
  for (std::uint64_t pass = 0; pass < 2; ++pass) {
    const std::uint64_t t = 100000 * pass;
    add(graph::NodeKind::Layer, "layer 0", 0, 0, t + 1000, 4000);
    add(graph::NodeKind::Brick, "blk.0.attn_norm", 0, 0, t + 1100, 900);
    add(graph::NodeKind::Brick, "blk.0.qkv", 0, 0, t + 2100, 2800);
    add(graph::NodeKind::Kernel, "blk.0.qkv/dot/slot 0", 0, 0, t + 2200, 2000);
    add(graph::NodeKind::Kernel, "blk.0.qkv/dot/slot 1", 0, 1, t + 2250, 2100);
    add(graph::NodeKind::Sync, "blk.0.qkv/dot/join", 0, 0, t + 4200, 300);
    add(graph::NodeKind::Layer, "layer 1", 1, 0, t + 5000, 3000);
    add(graph::NodeKind::Brick, "blk.1.ffn_down", 1, 0, t + 5100, 2800);
  }
  return g;
}

inline RunFacts sample_facts() {
  RunFacts run;
  run.title = std::string("tiny <model> & co");
  run.tokens = 8;
  run.layers = {{"token_embd", 8, 40000}, {"blk.0", 8, 812345}, {"blk.1", 8, 790001}, {"output", 8, 123457}};
  run.peaks = graph::MachinePeaks{.gflops_per_second = 400.0, .gb_per_second = 20.0};
  run.timeline = last_pass_timeline(sample_graph(), run.timeline_tokens);
  run.verdicts = {{"verify", true, "12 bricks, 30 assertions, 0 failed"},
                  {"budgets", false, std::string("over budget: ") + std::string(kHostileName)}};
  return run;
}

// The profile's JSON with the run's facts, as `brick run --profile-json` writes it.
inline std::string sample_profile_json() {
  ManualClock clock;
  ProfilerOptions options;
  options.clock = ClockSource::Manual;
  options.manual_clock = &clock;
  BrickProfiler profiler(options);
  const auto run = [&](ProfileTimer timer, std::uint64_t ns, std::uint64_t bytes, std::uint64_t flops) {
    clock.advance(std::chrono::nanoseconds(ns));
    profiler.stop(timer, 1, bytes, flops);
  };
  profiler.set_budget(BrickId::QkvProjection, TokenBudget::from_us_per_token(50.0));
  profiler.set_budget(BrickId::RmsNorm, TokenBudget::from_us_per_token(1.0));
  for (int token = 0; token < 8; ++token) {
    run(profiler.start(BrickId::RmsNorm), 1234 + 10 * token, 8192, 6144);
    run(profiler.start(BrickId::QkvProjection), 41234 + 7 * token, 1 << 20, 1 << 21);
    run(profiler.start(BrickId::Residual), 333, 12288, 0);
    run(profiler.start(kHostileName), 2718, 4096, 1 << 16);
  }
  profiler.add_tokens(8);
  return to_profile_json(profiler, sample_facts());
}

}  // namespace brick::report
