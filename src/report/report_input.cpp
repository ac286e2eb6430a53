// The report's input: the "run" field written beside the profile, and reading a profile document
// back (html_report.hpp describes both).
#include <fmt/format.h>
#include <fmt/std.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "brick/core/error.hpp"
#include "brick/graph/graph_export.hpp"
#include "brick/report/html_report.hpp"
#include "graph/json_document.hpp"
#include "profile/utf8.hpp"
#include "report/report_checks.hpp"

namespace brick::report {
namespace {

using graph::detail::JsonObject;

constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

nlohmann::json peaks_json(const std::optional<graph::MachinePeaks>& peaks) {
  if (!peaks) return nullptr;
  return {{"gflops_per_second", peaks->gflops_per_second}, {"gb_per_second", peaks->gb_per_second}};
}

nlohmann::json run_json(const RunFacts& run) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerTime& layer : run.layers) {
    layers.push_back({{"layer", layer.layer}, {"runs", layer.runs}, {"ns", layer.ns}});
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const TimelineSpan& span : run.timeline) {
    timeline.push_back({{"label", span.label},
                        {"kind", graph::name(span.kind)},
                        {"layer", span.layer},
                        {"thread", span.thread},
                        {"start_ns", span.start_ns},
                        {"duration_ns", span.duration_ns}});
  }
  nlohmann::json verdicts = nlohmann::json::array();
  for (const Verdict& verdict : run.verdicts) {
    verdicts.push_back({{"check", verdict.check}, {"passed", verdict.passed}, {"detail", verdict.detail}});
  }
  return {{"title", run.title},
          {"tokens", run.tokens},
          {"layers", std::move(layers)},
          {"peaks", peaks_json(run.peaks)},
          {"timeline_tokens", run.timeline_tokens},
          {"timeline", std::move(timeline)},
          {"verdicts", std::move(verdicts)}};
}

void require_run_text(const RunFacts& run) {
  brick::detail::require_utf8(run.title, "RunFacts: the title");
  for (const LayerTime& layer : run.layers) brick::detail::require_utf8(layer.layer, "RunFacts: a layer's name");
  for (const TimelineSpan& span : run.timeline) brick::detail::require_utf8(span.label, "RunFacts: a timeline label");
  for (const Verdict& verdict : run.verdicts) {
    brick::detail::require_utf8(verdict.check, "RunFacts: a verdict's check");
    brick::detail::require_utf8(verdict.detail, "RunFacts: a verdict's detail");
  }
}

double fraction(const JsonObject& object, std::string_view key) {
  const double value = object.number(key);
  if (value < 0.0 || value > 1.0) object.fail(key, "a fraction from 0 to 1");
  return value;
}

double non_negative(const JsonObject& object, std::string_view key) {
  const double value = object.number(key);
  if (value < 0.0) object.fail(key, "a number of at least 0");
  return value;
}

BrickTime read_brick(const JsonObject& b) {
  BrickTime brick;
  brick.name = b.string("name");
  brick.category = b.string("category");
  brick.count = b.unsigned_integer("count");
  brick.total_ns = b.unsigned_integer("total_ns");
  brick.elements = b.unsigned_integer("elements");
  brick.bytes = b.unsigned_integer("bytes");
  brick.flops = b.unsigned_integer("flops");
  brick.share = fraction(b, "share");
  brick.us_per_token = non_negative(b, "us_per_token");
  brick.tokens_per_second = non_negative(b, "tokens_per_second");
  brick.gb_per_second = non_negative(b, "gb_per_second");
  brick.gflop_per_second = non_negative(b, "gflop_per_second");
  if (!b.is_null("budget")) {
    const JsonObject budget = b.object("budget");
    brick.budget_us_per_token = non_negative(budget, "us_per_token");
    brick.utilisation = non_negative(budget, "utilisation");
  }
  return brick;
}

graph::MachinePeaks read_peaks(const JsonObject& p) {
  graph::MachinePeaks peaks{.gflops_per_second = p.number("gflops_per_second"),
                            .gb_per_second = p.number("gb_per_second")};
  if (!(peaks.gflops_per_second > 0.0)) p.fail("gflops_per_second", "a number above 0");
  if (!(peaks.gb_per_second > 0.0)) p.fail("gb_per_second", "a number above 0");
  return peaks;
}

RunFacts read_run(const JsonObject& r) {
  RunFacts run;
  run.title = r.string("title");
  run.tokens = r.unsigned_integer("tokens");
  for (std::size_t i = 0; i < r.array("layers").size(); ++i) {
    const JsonObject l = r.element("layers", i);
    run.layers.push_back({.layer = l.string("layer"), .runs = l.unsigned_integer("runs"), .ns = l.unsigned_integer("ns")});
  }
  if (!r.is_null("peaks")) run.peaks = read_peaks(r.object("peaks"));
  run.timeline_tokens = r.unsigned_integer("timeline_tokens");
  for (std::size_t i = 0; i < r.array("timeline").size(); ++i) {
    const JsonObject s = r.element("timeline", i);
    const auto kind = graph::parse_node_kind(s.string("kind"));
    if (!kind) s.fail("kind", "a node kind (layer, brick, kernel, transfer, sync, scope)");
    run.timeline.push_back({.label = s.string("label"),
                            .kind = *kind,
                            .layer = static_cast<std::int32_t>(s.integer("layer", -1, INT32_MAX)),
                            .thread = static_cast<std::uint32_t>(s.unsigned_integer("thread", UINT32_MAX)),
                            .start_ns = s.unsigned_integer("start_ns"),
                            .duration_ns = s.unsigned_integer("duration_ns")});
  }
  for (std::size_t i = 0; i < r.array("verdicts").size(); ++i) {
    const JsonObject v = r.element("verdicts", i);
    const nlohmann::json& element = r.array("verdicts").at(i);
    const auto passed = element.find("passed");
    if (passed == element.end() || !passed->is_boolean()) v.fail("passed", "true or false");
    run.verdicts.push_back({.check = v.string("check"), .passed = passed->get<bool>(), .detail = v.string("detail")});
  }
  return run;
}

bool finite_non_negative(double value) noexcept { return std::isfinite(value) && value >= 0.0; }

ReportInput from_json(const nlohmann::json& json, std::string_view what) {
  const JsonObject root(json, std::string(what));
  if (root.string("schema") != "brick.profile") root.fail("schema", "\"brick.profile\" (a brick profile)");
  if (root.integer("version", 0, INT32_MAX) != 1) root.fail("version", "1");
  ReportInput input;
  input.total_ns = root.unsigned_integer("total_ns");
  input.total_tokens = root.unsigned_integer("total_tokens");
  for (std::size_t i = 0; i < root.array("bricks").size(); ++i) input.bricks.push_back(read_brick(root.element("bricks", i)));
  if (root.has("run")) input.run = read_run(root.object("run"));
  return input;
}

}  // namespace

namespace detail {

void require_valid(const ReportInput& input) {
  for (const BrickTime& b : input.bricks) {
    const bool numbers = finite_non_negative(b.us_per_token) && finite_non_negative(b.tokens_per_second) &&
                         finite_non_negative(b.gb_per_second) && finite_non_negative(b.gflop_per_second);
    if (!numbers || !(b.share >= 0.0 && b.share <= 1.0)) {
      throw InvalidArgument(fmt::format("report: brick '{}' has a rate that is negative or not finite, "
                                        "or a share outside 0..1",
                                        b.name));
    }
    if (b.budget_us_per_token.has_value() != b.utilisation.has_value() ||
        (b.budget_us_per_token && !(finite_non_negative(*b.budget_us_per_token) && finite_non_negative(*b.utilisation)))) {
      throw InvalidArgument(fmt::format("report: brick '{}' needs a budget and its utilisation, both finite "
                                        "and at least 0, or neither",
                                        b.name));
    }
  }
  if (input.run.peaks) input.run.peaks->validate();
}

}  // namespace detail

std::vector<TimelineSpan> last_pass_timeline(const graph::ExecutionGraph& graph, std::uint64_t& tokens,
                                             std::size_t limit) {
  tokens = 0;
  std::optional<std::int32_t> first_layer;
  for (graph::NodeId id = 0; id < graph.size(); ++id) {
    const graph::Node& node = graph.node(id);
    if (node.kind == graph::NodeKind::Layer) first_layer = std::min(first_layer.value_or(node.layer), node.layer);
  }
  if (!first_layer) return {};
  graph::NodeId pass_start = 0;
  for (graph::NodeId id = 0; id < graph.size(); ++id) {
    const graph::Node& node = graph.node(id);
    if (node.kind == graph::NodeKind::Layer && node.layer == *first_layer) pass_start = id;
  }
  const std::uint64_t origin = graph.node(pass_start).start_ns;
  std::vector<TimelineSpan> spans;
  for (graph::NodeId id = pass_start; id < graph.size() && spans.size() < limit; ++id) {
    const graph::Node& node = graph.node(id);
    if (node.kind == graph::NodeKind::Scope || node.start_ns < origin) continue;
    if (node.kind == graph::NodeKind::Brick && tokens == 0) tokens = node.elements;
    spans.push_back({.label = std::string(node.label),
                     .kind = node.kind,
                     .layer = node.layer,
                     .thread = node.thread,
                     .start_ns = node.start_ns - origin,
                     .duration_ns = node.duration_ns});
  }
  return spans;
}

std::string to_profile_json(const BrickProfiler& profiler, const RunFacts& run) {
  if (run.peaks) run.peaks->validate();
  require_run_text(run);
  nlohmann::json document = nlohmann::json::parse(profiler.to_json());
  document["run"] = run_json(run);
  return document.dump(2);
}

ReportInput parse_report_input(std::string_view profile_json, std::string_view what) {
  return from_json(graph::detail::parse_json(profile_json, what), what);
}

ReportInput read_report_input(const std::filesystem::path& profile, const std::optional<std::filesystem::path>& graph) {
  ReportInput input = from_json(graph::detail::read_json_file(profile, kMaxFileBytes), profile.string());
  if (graph) {
    const nlohmann::json graph_document = graph::detail::read_json_file(*graph, kMaxFileBytes);
    const graph::ExecutionGraph execution = graph::graph_from_json(graph_document.dump(), graph->string());
    input.run.timeline = last_pass_timeline(execution, input.run.timeline_tokens);
  }
  return input;
}

}  // namespace brick::report
