#include "brick/profile/profiler_observer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "brick/core/run_result.hpp"

namespace brick {

void ProfilerObserver::on_layer_begin(std::size_t layer_index) {
  profiler_.begin_layer(static_cast<std::uint32_t>(
      std::min<std::size_t>(layer_index, std::numeric_limits<std::uint32_t>::max())));
}

void ProfilerObserver::on_layer_end() { profiler_.end_layer(); }

void ProfilerObserver::on_brick_begin(BrickId id, std::string_view name) {
  timer_ = index(id) < kBrickIdCount ? profiler_.start(id) : profiler_.start(name);
}

void ProfilerObserver::on_brick_end(BrickId id, std::string_view /*name*/, const RunReport* report) {
  if (report == nullptr) {
    profiler_.stop(timer_);  // the brick failed, but its time was spent
    return;
  }
  const RunMetrics& m = report->metrics;
  profiler_.stop(timer_, OpCost{.tokens = m.tokens, .flops = m.flops, .bytes = m.bytes});
  if (index(id) < kBrickIdCount && !budget_set_[index(id)] && m.budget_us_per_token > 0.0 &&
      std::isfinite(m.budget_us_per_token)) {
    profiler_.set_budget(id, TokenBudget::from_us_per_token(m.budget_us_per_token));
    budget_set_[index(id)] = true;
  }
}

}  // namespace brick
