// The snapshot every export prints, and the human summary table.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "profile/profiler_state.hpp"

namespace brick {
namespace detail {

ProfileSnapshot take_snapshot(const BrickProfiler& profiler, const ProfilerState& state) {
  ProfileSnapshot snapshot;
  snapshot.clock = profiler.clock_source();
  snapshot.ns_per_tick = profiler.ns_per_tick();
  snapshot.sync_mode = profiler.sync_mode();
  snapshot.enabled = profiler.is_enabled();
  for (std::size_t i = 0; i < kProfilerMisuseCount; ++i) {
    snapshot.misuse[i] = profiler.misuse_count(static_cast<ProfilerMisuse>(i));
  }
  const std::lock_guard lock(state.mutex);
  for (const BrickId id : all_brick_ids()) {
    BrickStats stats = state.merged(id);
    snapshot.categories[static_cast<std::size_t>(category(id))].merge(stats);
    if (stats.count > 0) {
      snapshot.bricks.push_back({std::string(name(id)), id, category(id), std::move(stats), state.budgets[index(id)]});
    }
  }
  for (const NamedBrick& named : state.named) {
    if (named.stats.count > 0) {
      snapshot.bricks.push_back({named.name, std::nullopt, BrickCategory::Other, named.stats, std::nullopt});
    }
  }
  std::stable_sort(snapshot.bricks.begin(), snapshot.bricks.end(),
                   [](const ReportRow& a, const ReportRow& b) { return a.stats.total_ns > b.stats.total_ns; });
  for (const ReportRow& row : snapshot.bricks) snapshot.total_ns += row.stats.total_ns;
  snapshot.total_tokens = state.tokens.load(std::memory_order_relaxed);
  for (const auto& shard : state.shards) {
    snapshot.layers.count += shard->layers.load(std::memory_order_acquire);
    snapshot.layers.wall_ns += shard->layer_wall_ns.load(std::memory_order_acquire);
    snapshot.layers.attributed_ns += shard->layer_attributed_total_ns.load(std::memory_order_acquire);
    snapshot.trace_events += shard->trace_size.load(std::memory_order_acquire);
    snapshot.dropped_trace_events += shard->trace_dropped.load(std::memory_order_relaxed);
  }
  snapshot.trace_capacity_per_thread = state.trace_capacity;
  return snapshot;
}

}  // namespace detail

namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

constexpr std::string_view kHeader =
    "{:<20} {:>9} {:>10} {:>6} {:>10} {:>10} {:>10} {:>9} {:>11} {:>8} {:>8} {:>9} {:>6}\n";

void append_row(std::string& out, std::string_view label, const BrickStats& stats, std::uint64_t total_ns,
                const std::optional<TokenBudget>& budget) {
  std::string budget_us = "-";
  std::string utilisation = "-";
  if (budget && stats.elements > 0) {
    budget_us = fmt::format("{:.3f}", budget->us_per_token());
    utilisation = fmt::format("{:.0f}%", 100.0 * budget->utilisation(stats.us_per_token()));
  }
  fmt::format_to(std::back_inserter(out),
                 "{:<20} {:>9} {:>10.3f} {:>6.1f} {:>10.3f} {:>10.3f} {:>10.3f} {:>9.3f} {:>11.1f} {:>8.2f} "
                 "{:>8.2f} {:>9} {:>6}\n",
                 label, stats.count, static_cast<double>(stats.total_ns) / 1e6, percent(stats.total_ns, total_ns),
                 stats.mean_ns() / 1e3, us(stats.percentile_ns(0.5)), us(stats.percentile_ns(0.99)),
                 stats.us_per_token(), stats.tokens_per_second(), stats.gb_per_second(), stats.gflop_per_second(),
                 budget_us, utilisation);
}

}  // namespace

std::string BrickProfiler::summary() const {
  const detail::ProfileSnapshot s = detail::take_snapshot(*this, *state_);
  std::string out = fmt::format("Brick profile: clock {} ({:.4f} ns/tick), sync {}, profiler {}\n", name(s.clock),
                                s.ns_per_tick, name(s.sync_mode), s.enabled ? "enabled" : "disabled");
  fmt::format_to(std::back_inserter(out), "total {:.3f} ms in {} bricks", static_cast<double>(s.total_ns) / 1e6,
                 s.bricks.size());
  if (s.total_tokens > 0) {
    fmt::format_to(std::back_inserter(out), ", {} tokens, {:.3f} us/token, {:.1f} tokens/s", s.total_tokens,
                   us(s.total_ns) / static_cast<double>(s.total_tokens),
                   static_cast<double>(s.total_tokens) * 1e9 / static_cast<double>(std::max<std::uint64_t>(s.total_ns, 1)));
  }
  out += "\n\n";
  fmt::format_to(std::back_inserter(out), kHeader, "brick", "calls", "total ms", "%", "mean us", "p50 us", "p99 us",
                 "us/token", "tokens/s", "GB/s", "GFLOP/s", "budget us", "util");
  for (const detail::ReportRow& row : s.bricks) append_row(out, row.name, row.stats, s.total_ns, row.budget);

  out += "\n";
  fmt::format_to(std::back_inserter(out), kHeader, "category", "calls", "total ms", "%", "mean us", "p50 us",
                 "p99 us", "us/token", "tokens/s", "GB/s", "GFLOP/s", "budget us", "util");
  std::vector<std::size_t> order(kBrickCategoryCount);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return s.categories[a].total_ns > s.categories[b].total_ns;
  });
  for (const std::size_t i : order) {
    if (s.categories[i].count > 0) {
      append_row(out, name(static_cast<BrickCategory>(i)), s.categories[i], s.total_ns, std::nullopt);
    }
  }

  if (s.layers.count > 0) {
    fmt::format_to(std::back_inserter(out), "\nlayers: {} closed, wall {:.3f} ms, bricks account for {:.2f}%\n",
                   s.layers.count, static_cast<double>(s.layers.wall_ns) / 1e6,
                   percent(s.layers.attributed_ns, s.layers.wall_ns));
  }
  if (s.trace_capacity_per_thread > 0) {
    fmt::format_to(std::back_inserter(out), "trace: {} events kept, {} dropped (capacity {} per thread)\n",
                   s.trace_events, s.dropped_trace_events, s.trace_capacity_per_thread);
  }
  std::string misuse;
  for (std::size_t i = 0; i < kProfilerMisuseCount; ++i) {
    if (s.misuse[i] > 0) {
      fmt::format_to(std::back_inserter(misuse), " {}={}", name(static_cast<ProfilerMisuse>(i)), s.misuse[i]);
    }
  }
  if (!misuse.empty()) out += "misuse:" + misuse + "\n";
  return out;
}

}  // namespace brick
