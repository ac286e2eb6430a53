#include "brick/trace/attention_stats.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "brick/core/error.hpp"

namespace brick::trace {
namespace {

bool in_unit_interval(double x) noexcept { return x > 0.0 && x <= 1.0; }

}  // namespace

void AttentionOptions::validate() const {
  if (top_k == 0 || top_k > kMaxAttentionTopK) {
    throw InvalidArgument(fmt::format("attention top_k {}; expected 1 to {}", top_k, kMaxAttentionTopK));
  }
  if (!std::isfinite(min_weight) || min_weight < 0.0) {
    throw InvalidArgument(fmt::format("attention min_weight {}; expected a finite weight >= 0", min_weight));
  }
  if (!in_unit_interval(sink_threshold) || !in_unit_interval(uniform_ratio) || !in_unit_interval(recency_threshold)) {
    throw InvalidArgument(fmt::format(
        "attention sink_threshold {}, uniform_ratio {}, recency_threshold {}; each expected in (0, 1]",
        sink_threshold, uniform_ratio, recency_threshold));
  }
  if (recency_window == 0) throw InvalidArgument("attention recency_window 0; expected at least 1");
}

AttentionStats compute_attention_stats(std::span<const float> weights, const AttentionOptions& options) {
  if (weights.empty()) throw InvalidArgument("attention weights: an empty span; expected one weight per position");
  if (weights.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidArgument(fmt::format("attention over {} positions; at most 2^32 - 1", weights.size()));
  }
  AttentionStats stats;
  const std::size_t n = weights.size();
  stats.positions = static_cast<std::uint32_t>(n);
  const std::size_t recent_from = n > options.recency_window ? n - options.recency_window : 0;
  const std::size_t k = options.top_k;
  for (std::size_t i = 0; i < n; ++i) {
    double w = weights[i];
    if (!(w >= 0.0) || std::isinf(w)) {
      ++stats.invalid;
      w = 0.0;
    }
    stats.total_mass += w;
    if (w > 0.0) stats.entropy -= w * std::log(w);
    if (i >= recent_from) stats.recent_mass += w;
    // Strictly greater: among equal weights the lower position stays ahead.
    if (w < options.min_weight || (stats.top_count == k && !(w > stats.top[k - 1].weight))) continue;
    std::size_t slot = stats.top_count < k ? stats.top_count++ : k - 1;
    while (slot > 0 && w > stats.top[slot - 1].weight) {
      stats.top[slot] = stats.top[slot - 1];
      --slot;
    }
    stats.top[slot] = WeightedPosition{static_cast<std::uint32_t>(i), w};
  }
  double top_mass = 0.0;
  for (const WeightedPosition& p : stats.top_positions()) top_mass += p.weight;
  stats.tail_mass = std::max(0.0, stats.total_mass - top_mass);
  stats.sink = stats.top_count > 0 && stats.top[0].position == 0 && stats.top[0].weight >= options.sink_threshold;
  stats.uniform = n >= 2 && stats.entropy >= options.uniform_ratio * std::log(static_cast<double>(n));
  stats.recency = n > options.recency_window && stats.total_mass > 0.0 &&
                  stats.recent_mass >= options.recency_threshold * stats.total_mass;
  return stats;
}

}  // namespace brick::trace
