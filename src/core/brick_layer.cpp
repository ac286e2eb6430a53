#include "brick/core/brick_layer.hpp"

namespace brick {

double BrickLayer::budget_us_per_token() const noexcept {
  double total = 0.0;
  for (const Member& member : members_) total += member.budget_us_per_token;
  return total;
}

Result<LayerReport> BrickLayer::run(LayerObserver* observer, std::size_t layer_index) {
  if (observer) observer->on_layer_begin(layer_index);
  LayerReport report;
  report.layer = name_;
  report.members = reports_;
  double slowest_us = -1.0;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& member = members_[i];
    if (observer) observer->on_brick_begin(member.id, member.name);
    Result<RunReport> result = member.run();
    if (observer && result) observer->on_brick_output(*result, member.current_output());
    if (observer) observer->on_brick_end(member.id, member.name, result ? &*result : nullptr);
    if (!result) {
      if (observer) observer->on_layer_end();
      return tl::make_unexpected(std::move(result.error()));
    }
    const RunReport& run = *result;
    report.total_ns += run.metrics.ns;
    report.us_per_token += run.metrics.us_per_token;
    report.budget_met = report.budget_met && run.metrics.budget_met;
    if (run.metrics.us_per_token > slowest_us) {
      slowest_us = run.metrics.us_per_token;
      report.bottleneck = member.name;
    }
    reports_[i] = run;
  }
  report.throughput_ceiling_tokens_per_s = slowest_us > 0 ? 1e6 / slowest_us : 0.0;
  if (observer) observer->on_layer_end();
  return report;
}

}  // namespace brick
