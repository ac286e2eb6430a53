#include "brick/core/brick_layer.hpp"

namespace brick {

double BrickLayer::budget_us_per_token() const noexcept {
  double total = 0.0;
  for (const Member& member : members_) total += member.budget_us_per_token;
  return total;
}

Result<LayerReport> BrickLayer::run() {
  LayerReport report;
  report.layer = name_;
  report.members.reserve(members_.size());
  double slowest_us = -1.0;
  for (Member& member : members_) {
    Result<RunReport> result = member.run();
    if (!result) return tl::make_unexpected(std::move(result.error()));
    const RunReport& run = *result;
    report.total_ns += run.metrics.ns;
    report.us_per_token += run.metrics.us_per_token;
    report.budget_met = report.budget_met && run.metrics.budget_met;
    if (run.metrics.us_per_token > slowest_us) {
      slowest_us = run.metrics.us_per_token;
      report.bottleneck = member.name;
    }
    report.members.push_back(run);
  }
  report.throughput_ceiling_tokens_per_s = slowest_us > 0 ? 1e6 / slowest_us : 0.0;
  return report;
}

}  // namespace brick
