// BrickProfiler::to_json(). Schema "brick.profile", version 1:
//
// {
//   "schema": "brick.profile", "version": 1,
//   "clock": {"source": "tsc" | "steady_clock" | "manual", "ns_per_tick": number},
//   "sync_mode": "eager" | "deferred", "enabled": bool,
//   "total_ns": uint, "total_tokens": uint,          // summed brick time; add_tokens() total
//   "bricks": [Brick...],                            // bricks that ran, longest total first
//   "categories": [Brick...],                        // Norm, Attention, Ffn, Other (BrickIds only)
//   "layers": {"count": uint, "wall_ns": uint, "attributed_ns": uint},
//   "misuse": {"stop_inactive_timer": uint, "foreign_timer": uint, "invalid_brick_id": uint},
//   "trace": {"capacity_per_thread": uint, "events": uint, "dropped": uint}
// }
// Brick = {
//   "name": string, "id": uint | null (null: a named brick), "category": string,
//   "count", "total_ns", "min_ns", "max_ns", "elements", "bytes", "flops": uint,
//   "mean_ns", "stddev_ns": number, "p50_ns", "p90_ns", "p99_ns", "p999_ns": uint,
//   "share": number (of total_ns, 0..1), "us_per_token", "tokens_per_second", "gb_per_second",
//   "gflop_per_second": number,
//   "budget": {"us_per_token": number, "utilisation": number} | null
// }
// Category entries have "id": null and "budget": null.
#include <nlohmann/json.hpp>

#include "profile/profiler_state.hpp"

namespace brick {
namespace {

nlohmann::json brick_json(std::string_view brick_name, std::optional<BrickId> id, BrickCategory brick_category,
                          const BrickStats& stats, std::uint64_t total_ns,
                          const std::optional<TokenBudget>& budget) {
  nlohmann::json out = {
      {"name", brick_name},
      {"id", id ? nlohmann::json(index(*id)) : nlohmann::json(nullptr)},
      {"category", name(brick_category)},
      {"count", stats.count},
      {"total_ns", stats.total_ns},
      {"min_ns", stats.min_ns},
      {"max_ns", stats.max_ns},
      {"mean_ns", stats.mean_ns()},
      {"stddev_ns", stats.stddev_ns()},
      {"p50_ns", stats.percentile_ns(0.5)},
      {"p90_ns", stats.percentile_ns(0.9)},
      {"p99_ns", stats.percentile_ns(0.99)},
      {"p999_ns", stats.percentile_ns(0.999)},
      {"elements", stats.elements},
      {"bytes", stats.bytes},
      {"flops", stats.flops},
      {"share", total_ns == 0 ? 0.0 : static_cast<double>(stats.total_ns) / static_cast<double>(total_ns)},
      {"us_per_token", stats.us_per_token()},
      {"tokens_per_second", stats.tokens_per_second()},
      {"gb_per_second", stats.gb_per_second()},
      {"gflop_per_second", stats.gflop_per_second()},
      {"budget", nullptr},
  };
  if (budget && stats.elements > 0) {
    out["budget"] = {{"us_per_token", budget->us_per_token()},
                     {"utilisation", budget->utilisation(stats.us_per_token())}};
  }
  return out;
}

}  // namespace

std::string BrickProfiler::to_json() const {
  const detail::ProfileSnapshot s = detail::take_snapshot(*this, *state_);
  nlohmann::json bricks = nlohmann::json::array();
  for (const detail::ReportRow& row : s.bricks) {
    bricks.push_back(brick_json(row.name, row.id, row.category, row.stats, s.total_ns, row.budget));
  }
  nlohmann::json categories = nlohmann::json::array();
  for (std::size_t i = 0; i < kBrickCategoryCount; ++i) {
    const auto brick_category = static_cast<BrickCategory>(i);
    categories.push_back(
        brick_json(name(brick_category), std::nullopt, brick_category, s.categories[i], s.total_ns, std::nullopt));
  }
  nlohmann::json misuse = nlohmann::json::object();
  for (std::size_t i = 0; i < kProfilerMisuseCount; ++i) misuse[name(static_cast<ProfilerMisuse>(i))] = s.misuse[i];
  const nlohmann::json document = {
      {"schema", "brick.profile"},
      {"version", 1},
      {"clock", {{"source", name(s.clock)}, {"ns_per_tick", s.ns_per_tick}}},
      {"sync_mode", name(s.sync_mode)},
      {"enabled", s.enabled},
      {"total_ns", s.total_ns},
      {"total_tokens", s.total_tokens},
      {"bricks", std::move(bricks)},
      {"categories", std::move(categories)},
      {"layers", {{"count", s.layers.count}, {"wall_ns", s.layers.wall_ns}, {"attributed_ns", s.layers.attributed_ns}}},
      {"misuse", std::move(misuse)},
      {"trace",
       {{"capacity_per_thread", s.trace_capacity_per_thread},
        {"events", s.trace_events},
        {"dropped", s.dropped_trace_events}}},
  };
  return document.dump(2);
}

}  // namespace brick
