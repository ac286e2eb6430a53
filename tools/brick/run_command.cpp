// brick run: the main job. Builds a llama-style decoder layer from float bricks on synthetic
// weights, runs it token by token, and reports per brick where the time went, against what budget,
// and whether every assertion held.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "brick/core/layer_run_stats.hpp"
#include "brick/model/decoder_layer.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"
#include "commands.hpp"

namespace brick::cli {
namespace {

struct RunOptions {
  model::DecoderShape shape;
  std::size_t tokens = 32;
  std::string backend = "auto";
  double budget_gb_per_second = 10.0;
  std::string checks = "cheap";
  std::uint64_t seed = 42;
  bool json = false;
  bool profile = true;
  std::string sync = "deferred";
  std::string trace_path;
  std::size_t trace_events = 1 << 20;
  std::string profile_json_path;
  std::string prometheus_path;
};

CheckPolicy parse_checks(const std::string& text) {
  if (text == "all") return CheckPolicy::All;
  if (text == "none") return CheckPolicy::None;
  return CheckPolicy::Cheap;
}

struct VerifySummary {
  std::size_t bricks = 0;
  std::size_t assertions = 0;
  std::size_t failed = 0;
  std::vector<std::string> failures;
  std::string worst_brick;  // largest Equivalence absolute difference
  AssertionOutcome worst;
};

VerifySummary summarize(const std::vector<VerifyReport>& reports) {
  VerifySummary summary;
  summary.bricks = reports.size();
  for (const VerifyReport& report : reports) {
    for (const AssertionOutcome& outcome : report.assertions) {
      ++summary.assertions;
      if (!outcome.passed) {
        ++summary.failed;
        summary.failures.push_back(
            fmt::format("{}: {} {}", report.brick, outcome.name, outcome.summary()));
      }
      if (outcome.kind == AssertionKind::Equivalence &&
          (summary.worst_brick.empty() || outcome.max_abs_error > summary.worst.max_abs_error)) {
        summary.worst_brick = report.brick;
        summary.worst = outcome;
      }
    }
  }
  return summary;
}

void print_table(const RunOptions& options, const model::DecoderLayer& layer,
                 const LayerRunStats& stats, const VerifySummary& verified, double weight_mb) {
  const auto& s = options.shape;
  fmt::print(
      "brick run: decoder layer, hidden {}, {} heads ({} kv), ffn {}, context {}; {} tokens\n",
      s.hidden, s.n_heads, s.n_kv_heads, s.ffn, s.context, options.tokens);
  fmt::print(
      "backend {}, {} bricks per token, {:.1f} MB of f32 weights; budgets: every brick at "
      "{:g} GB/s\n\n",
      name(layer.backend()), layer.brick_count(), weight_mb, options.budget_gb_per_second);
  fmt::print("{:<15} {:<17} {:<7} {:>6} {:>10} {:>11} {:>8} {:>10} {:>6}  {}\n", "brick", "id",
             "backend", "calls", "us/token", "tokens/s", "GB/s", "budget us", "util", "assertions");
  for (const MemberStats& m : stats.members()) {
    const std::string checks =
        m.assertions_failed == 0
            ? fmt::format("{} ok", m.assertions_checked)
            : fmt::format("{} of {} FAILED", m.assertions_failed, m.assertions_checked);
    fmt::print("{:<15} {:<17} {:<7} {:>6} {:>10.2f} {:>11.0f} {:>8.2f} {:>10.2f} {:>5.0f}%  {}\n",
               m.name, name(m.id), name(m.backend), m.calls, m.us_per_token(),
               m.tokens_per_second(), m.gb_per_second(), m.budget_us_per_token(),
               m.utilisation() * 100.0, checks);
  }
  const double us_per_token = static_cast<double>(stats.total_ns()) / 1e3 /
                              static_cast<double>(std::max<std::uint64_t>(stats.runs(), 1));
  const auto slowest = std::max_element(
      stats.members().begin(), stats.members().end(),
      [](const MemberStats& a, const MemberStats& b) { return a.total_ns < b.total_ns; });
  fmt::print(
      "\nlayer: {:.1f} us/token ({:.1f} tokens/s); most time in {} ({:.0f}%)\n", us_per_token,
      1e6 / us_per_token, slowest->name,
      100.0 * static_cast<double>(slowest->total_ns) / static_cast<double>(stats.total_ns()));
  fmt::print("verify: {} bricks, {} assertions, {} failed", verified.bricks, verified.assertions,
             verified.failed);
  if (!verified.worst_brick.empty()) {
    fmt::print("; largest gap to the reference {:.2g} absolute, in {} ({})",
               verified.worst.max_abs_error, verified.worst_brick, verified.worst.name);
  }
  fmt::print("\n");
  for (const std::string& failure : verified.failures) fmt::print("  {}\n", failure);
}

void print_json(const RunOptions& options, const model::DecoderLayer& layer,
                const LayerRunStats& stats, const VerifySummary& verified) {
  nlohmann::json bricks = nlohmann::json::array();
  for (const MemberStats& m : stats.members()) {
    bricks.push_back({{"name", m.name},
                      {"id", name(m.id)},
                      {"backend", name(m.backend)},
                      {"calls", m.calls},
                      {"total_ns", m.total_ns},
                      {"tokens", m.tokens},
                      {"us_per_token", m.us_per_token()},
                      {"tokens_per_second", m.tokens_per_second()},
                      {"gb_per_second", m.gb_per_second()},
                      {"gflops_per_second", m.gflops_per_second()},
                      {"budget_us_per_token", m.budget_us_per_token()},
                      {"utilisation", m.utilisation()},
                      {"assertions_checked", m.assertions_checked},
                      {"assertions_failed", m.assertions_failed}});
  }
  const auto& s = options.shape;
  const nlohmann::json out = {{"schema", "brick.run/1"},
                              {"shape",
                               {{"hidden", s.hidden},
                                {"heads", s.n_heads},
                                {"kv_heads", s.n_kv_heads},
                                {"ffn", s.ffn},
                                {"context", s.context}}},
                              {"backend", name(layer.backend())},
                              {"tokens", options.tokens},
                              {"total_ns", stats.total_ns()},
                              {"bricks", bricks},
                              {"verify",
                               {{"bricks", verified.bricks},
                                {"assertions", verified.assertions},
                                {"failed", verified.failed},
                                {"failures", verified.failures}}}};
  fmt::print("{}\n", out.dump(2));
}

void run(const RunOptions& options) {
  const auto backend = parse_backend(options.backend);
  model::DecoderOptions decoder;
  decoder.backend = *backend;
  decoder.bandwidth_budget = ByteBudget::from_gb_per_second(options.budget_gb_per_second);
  decoder.policy.checks = parse_checks(options.checks);
  const model::SyntheticWeights weights(options.shape, options.seed);
  model::DecoderLayer layer(options.shape, weights.view(), decoder);

  ProfilerOptions profiler_options;
  profiler_options.sync_mode = *parse_sync_mode(options.sync);
  profiler_options.enabled = options.profile;
  profiler_options.trace_capacity_per_thread =
      options.trace_path.empty() ? 0 : options.trace_events;
  BrickProfiler profiler(profiler_options);
  profiler.set_thread_name("decoder");
  ProfilingObserver observer(profiler);

  // The first token is a unit-scale hidden state; each later token is the layer's previous output,
  // as if the same layer were stacked.
  std::vector<float> x(options.shape.hidden);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f);
  LayerRunStats stats;
  bool failed = false;
  for (std::size_t token = 0; token < options.tokens; ++token) {
    const auto report = layer.step(x, token, &observer);
    if (!report) {
      fmt::print(stderr, "brick run: {}\n", message(report.error()));
      failed = true;
      break;
    }
    stats.add(*report);
    profiler.add_tokens(1);
    std::copy(layer.output().begin(), layer.output().end(), x.begin());
  }
  const VerifySummary verified = summarize(layer.verify());
  const double weight_mb = static_cast<double>(weights.view().bytes()) / 1e6;
  for (const MemberStats& m : stats.members()) {
    if (!profiler.budget(m.id)) {
      profiler.set_budget(m.id, TokenBudget::from_us_per_token(m.budget_us_per_token()));
    }
  }
  if (options.json) {
    print_json(options, layer, stats, verified);
  } else {
    print_table(options, layer, stats, verified, weight_mb);
    if (options.profile) fmt::print("\n{}", profiler.summary());
  }
  if (!options.trace_path.empty()) profiler.write_chrome_trace(options.trace_path);
  if (!options.profile_json_path.empty()) profiler.write_json(options.profile_json_path);
  if (!options.prometheus_path.empty()) profiler.write_prometheus(options.prometheus_path);
  const bool any_failed = std::any_of(stats.members().begin(), stats.members().end(),
                                      [](const MemberStats& m) { return m.assertions_failed > 0; });
  if (failed || any_failed || verified.failed > 0) set_exit_code(2);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Run a decoder layer built from bricks on synthetic weights, profiled and verified");
  cmd->add_option("-n,--tokens", options->tokens, "Tokens to run through the layer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--hidden", options->shape.hidden, "Hidden size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--heads", options->shape.n_heads, "Attention heads")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--kv-heads", options->shape.n_kv_heads, "Key/value heads (GQA)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ffn", options->shape.ffn, "Feed-forward size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--context", options->shape.context, "Cached positions each query attends to")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("-b,--backend", options->backend, "auto, scalar, avx2 or avx512")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512"}, CLI::ignore_case));
  cmd->add_option("--budget-gbps", options->budget_gb_per_second,
                  "Each brick's budget: the time its bytes take at this bandwidth")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--checks", options->checks,
                  "Assertions on every call: cheap (finite, bounds), all (also equivalence), none")
      ->capture_default_str()
      ->check(CLI::IsMember({"cheap", "all", "none"}));
  cmd->add_option("--seed", options->seed, "Seed of the synthetic weights")->capture_default_str();
  cmd->add_flag("--json", options->json, "Machine-readable output");
  cmd->add_option("--sync", options->sync,
                  "Profiler sync: eager (exact per brick) or deferred (resolved per layer)")
      ->capture_default_str()
      ->check(CLI::IsMember({"eager", "deferred"}));
  cmd->add_flag("!--no-profile", options->profile, "Run with the profiler disabled");
  cmd->add_option("--trace", options->trace_path,
                  "Write a Chrome trace (ui.perfetto.dev, chrome://tracing) to this file");
  cmd->add_option("--trace-events", options->trace_events,
                  "Trace events kept; later ones are counted as dropped")
      ->capture_default_str();
  cmd->add_option("--profile-json", options->profile_json_path, "Write the profile as JSON");
  cmd->add_option("--prometheus", options->prometheus_path,
                  "Write the profile in Prometheus text format");
  cmd->callback([options] { run(*options); });
}

}  // namespace brick::cli
