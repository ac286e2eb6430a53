// BrickProfiler::to_prometheus(): text exposition format 0.0.4. Per brick (label brick, and category):
// counters of executions, elements, bytes and FLOPs, and a duration histogram in seconds with fixed
// 1-2.5-5 bounds from 100 ns to 10 s plus +Inf. Bucket counts come from the profiler's log-linear
// histogram, so a sample within 1.6% of a bound may be counted on either side of it.
#include <fmt/format.h>

#include <iterator>

#include "profile/profiler_state.hpp"

namespace brick {
namespace {

constexpr std::uint64_t kBucketBoundsNs[] = {
    100,         250,         500,         1'000,         2'500,         5'000,         10'000,
    25'000,      50'000,      100'000,     250'000,       500'000,       1'000'000,     2'500'000,
    5'000'000,   10'000'000,  25'000'000,  50'000'000,    100'000'000,   250'000'000,   500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};

std::string escape_label(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void header(std::string& out, std::string_view metric, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", metric, help, metric, type);
}

}  // namespace

std::string BrickProfiler::to_prometheus() const {
  const detail::ProfileSnapshot s = detail::take_snapshot(*this, *state_);
  std::vector<std::string> labels;
  for (const detail::ReportRow& row : s.bricks) {
    labels.push_back(fmt::format("brick=\"{}\",category=\"{}\"", escape_label(row.name), name(row.category)));
  }
  std::string out;
  const auto counter = [&](std::string_view metric, std::string_view help, auto value_of) {
    header(out, metric, "counter", help);
    for (std::size_t i = 0; i < s.bricks.size(); ++i) {
      fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", metric, labels[i], value_of(s.bricks[i].stats));
    }
  };
  counter("brick_executions_total", "Brick executions recorded by the profiler.",
          [](const BrickStats& b) { return b.count; });
  counter("brick_elements_total", "Tokens (or elements) processed by the brick.",
          [](const BrickStats& b) { return b.elements; });
  counter("brick_bytes_total", "Bytes read and written by the brick.", [](const BrickStats& b) { return b.bytes; });
  counter("brick_flops_total", "Floating-point operations done by the brick.",
          [](const BrickStats& b) { return b.flops; });

  header(out, "brick_duration_seconds", "histogram", "Execution time of one brick call.");
  for (std::size_t i = 0; i < s.bricks.size(); ++i) {
    const BrickStats& stats = s.bricks[i].stats;
    for (const std::uint64_t bound_ns : kBucketBoundsNs) {
      fmt::format_to(std::back_inserter(out), "brick_duration_seconds_bucket{{{},le=\"{}\"}} {}\n", labels[i],
                     static_cast<double>(bound_ns) / 1e9, stats.histogram.count_at_or_below(bound_ns));
    }
    const std::uint64_t observed = stats.histogram.total_count();
    fmt::format_to(std::back_inserter(out), "brick_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n", labels[i],
                   observed);
    fmt::format_to(std::back_inserter(out), "brick_duration_seconds_sum{{{}}} {}\n", labels[i],
                   static_cast<double>(stats.total_ns) / 1e9);
    fmt::format_to(std::back_inserter(out), "brick_duration_seconds_count{{{}}} {}\n", labels[i], observed);
  }

  header(out, "brick_tokens_total", "counter", "Tokens reported to the profiler with add_tokens().");
  fmt::format_to(std::back_inserter(out), "brick_tokens_total {}\n", s.total_tokens);
  header(out, "brick_profiler_misuse_total", "counter", "Profiler API misuse, counted instead of failing.");
  for (std::size_t i = 0; i < kProfilerMisuseCount; ++i) {
    fmt::format_to(std::back_inserter(out), "brick_profiler_misuse_total{{kind=\"{}\"}} {}\n",
                   name(static_cast<ProfilerMisuse>(i)), s.misuse[i]);
  }
  header(out, "brick_trace_events_dropped_total", "counter", "Chrome trace events dropped by the bounded buffer.");
  fmt::format_to(std::back_inserter(out), "brick_trace_events_dropped_total {}\n", s.dropped_trace_events);
  header(out, "brick_profiler_info", "gauge", "Clock source and sync mode of the profiler (always 1).");
  fmt::format_to(std::back_inserter(out), "brick_profiler_info{{clock=\"{}\",sync_mode=\"{}\"}} 1\n", name(s.clock),
                 name(s.sync_mode));
  return out;
}

}  // namespace brick
