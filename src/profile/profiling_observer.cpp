#include "brick/profile/profiling_observer.hpp"

#include <algorithm>
#include <limits>

namespace brick {

void ProfilingObserver::on_layer_begin(std::size_t layer_index) {
  profiler_.begin_layer(static_cast<std::uint32_t>(
      std::min<std::size_t>(layer_index, std::numeric_limits<std::uint32_t>::max())));
  if (LayerObserver* graph = profiler_.graph()) graph->on_layer_begin(layer_index);
}

void ProfilingObserver::on_layer_end() {
  if (LayerObserver* graph = profiler_.graph()) graph->on_layer_end();
  profiler_.end_layer();
}

void ProfilingObserver::on_tokens(std::size_t first_position, std::size_t count) {
  if (LayerObserver* graph = profiler_.graph()) graph->on_tokens(first_position, count);
}

// A member without a BrickId is profiled under its name (the profiler's slow path).
void ProfilingObserver::on_brick_begin(BrickId id, std::string_view name) {
  if (LayerObserver* graph = profiler_.graph()) graph->on_brick_begin(id, name);
  timer_ = index(id) < kBrickIdCount ? profiler_.start(id) : profiler_.start(name);
}

// The brick is timed up to here, so that what the graph does with its output is not charged to it.
void ProfilingObserver::on_brick_output(const RunReport& report, std::span<float> output) {
  stop(&report);
  if (LayerObserver* graph = profiler_.graph()) graph->on_brick_output(report, output);
}

void ProfilingObserver::on_brick_end(BrickId id, std::string_view name, const RunReport* report) {
  if (timer_.running()) stop(report);
  if (LayerObserver* graph = profiler_.graph()) graph->on_brick_end(id, name, report);
}

void ProfilingObserver::stop(const RunReport* report) noexcept {
  if (report == nullptr) {
    profiler_.stop(timer_);
    return;
  }
  const RunMetrics& m = report->metrics;
  profiler_.stop(timer_, OpCost{.tokens = m.tokens, .flops = m.flops, .bytes = m.bytes});
}

}  // namespace brick
