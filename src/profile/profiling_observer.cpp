#include "brick/profile/profiling_observer.hpp"

#include <algorithm>
#include <limits>

namespace brick {

void ProfilingObserver::on_layer_begin(std::size_t layer_index) {
  profiler_.begin_layer(static_cast<std::uint32_t>(
      std::min<std::size_t>(layer_index, std::numeric_limits<std::uint32_t>::max())));
}

void ProfilingObserver::on_layer_end() {
  profiler_.end_layer();
}

// A member without a BrickId is profiled under its name (the profiler's slow path).
void ProfilingObserver::on_brick_begin(BrickId id, std::string_view name) {
  timer_ = index(id) < kBrickIdCount ? profiler_.start(id) : profiler_.start(name);
}

void ProfilingObserver::on_brick_end(BrickId, std::string_view, const RunReport* report) {
  if (report == nullptr) {
    profiler_.stop(timer_);
    return;
  }
  const RunMetrics& m = report->metrics;
  profiler_.stop(timer_, OpCost{.tokens = m.tokens, .flops = m.flops, .bytes = m.bytes});
}

}  // namespace brick
