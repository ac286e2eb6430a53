#include "brick/core/layer_run_stats.hpp"

#include <algorithm>

namespace brick {

double MemberStats::us_per_token() const noexcept {
  return tokens > 0 ? static_cast<double>(total_ns) / 1e3 / static_cast<double>(tokens) : 0.0;
}

double MemberStats::tokens_per_second() const noexcept {
  return total_ns > 0 ? static_cast<double>(tokens) * 1e9 / static_cast<double>(total_ns) : 0.0;
}

double MemberStats::gb_per_second() const noexcept {
  return total_ns > 0 ? bytes / static_cast<double>(total_ns) : 0.0;
}

double MemberStats::gflops_per_second() const noexcept {
  return total_ns > 0 ? flops / static_cast<double>(total_ns) : 0.0;
}

double MemberStats::budget_us_per_token() const noexcept {
  return tokens > 0 ? budget_ns / 1e3 / static_cast<double>(tokens) : 0.0;
}

double MemberStats::utilisation() const noexcept {
  return budget_ns > 0 ? static_cast<double>(total_ns) / budget_ns : 0.0;
}

void LayerRunStats::add(const LayerReport& report) {
  ++runs_;
  total_ns_ += report.total_ns;
  for (const RunReport& run : report.members) {
    auto it = std::find_if(members_.begin(), members_.end(),
                           [&](const MemberStats& m) { return m.name == run.brick; });
    if (it == members_.end()) {
      MemberStats& added = members_.emplace_back();
      added.name = run.brick;
      added.id = run.id;
      added.backend = run.backend;
      it = members_.end() - 1;
    }
    MemberStats& m = *it;
    const RunMetrics& metrics = run.metrics;
    ++m.calls;
    m.total_ns += metrics.ns;
    m.tokens += metrics.tokens;
    m.flops += metrics.flops;
    m.bytes += metrics.bytes;
    m.budget_ns += metrics.budget_us_per_token * 1e3 * static_cast<double>(metrics.tokens);
    for (const AssertionOutcome& outcome : run.assertions) {
      if (!outcome.evaluated) continue;
      ++m.assertions_checked;
      if (!outcome.passed) {
        if (m.assertions_failed == 0) m.first_failure = outcome.name + ": " + outcome.summary();
        ++m.assertions_failed;
      }
    }
  }
}

}  // namespace brick
