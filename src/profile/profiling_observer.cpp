#include "brick/profile/profiling_observer.hpp"

namespace brick {

void ProfilingObserver::on_layer_begin(std::size_t layer_index) {
  profiler_.begin_layer(static_cast<std::uint32_t>(layer_index));
}

void ProfilingObserver::on_layer_end() {
  profiler_.end_layer();
}

void ProfilingObserver::on_brick_begin(BrickId id, std::string_view) {
  timer_ = profiler_.start(id);
}

void ProfilingObserver::on_brick_end(BrickId, std::string_view, const RunReport* report) {
  if (report == nullptr) {
    profiler_.stop(timer_);
    return;
  }
  const RunMetrics& m = report->metrics;
  profiler_.stop(timer_, m.tokens, static_cast<std::uint64_t>(m.bytes),
                 static_cast<std::uint64_t>(m.flops));
}

}  // namespace brick
