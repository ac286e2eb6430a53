// BrickProfiler::to_chrome_trace(): the Trace Event Format in its object form. Every brick execution
// is one complete ("X") event with ts and dur in microseconds since the profiler's epoch (construction
// or reset()), to the nanosecond; every closed layer is an X event enclosing its bricks; "M" events
// name the process and each thread. otherData carries the clock, the sync mode and how many events the
// bounded per-thread buffers dropped.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "profile/profiler_state.hpp"

namespace brick {
namespace {

constexpr int kPid = 1;

struct TimedEvent {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  const detail::TraceEvent* event;
};

double to_us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

std::string BrickProfiler::to_chrome_trace() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0}, {"args", {{"name", "brick"}}}});
  std::uint64_t dropped = 0;
  std::size_t capacity = 0;
  {
    const std::lock_guard lock(state_->mutex);
    capacity = state_->trace_capacity;
    // Each timestamp is converted from ticks since the epoch, so nesting in ticks is nesting in ns.
    const auto since_epoch_ns = [&](std::uint64_t ticks) {
      return converter_.to_ns(ticks > state_->epoch_ticks ? ticks - state_->epoch_ticks : 0);
    };
    for (const auto& shard : state_->shards) {
      dropped += shard->trace_dropped.load(std::memory_order_relaxed);
      const std::size_t size = shard->trace_size.load(std::memory_order_acquire);
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", kPid},
                        {"tid", shard->thread_index},
                        {"args", {{"name", state_->thread_name(*shard)}}}});
      std::vector<TimedEvent> timed;
      timed.reserve(size);
      for (std::size_t i = 0; i < size; ++i) {
        const detail::TraceEvent& e = shard->trace[i];
        timed.push_back({since_epoch_ns(e.start_ticks), since_epoch_ns(e.end_ticks), &e});
      }
      // Parents (earlier start, longer) before children, as trace viewers expect.
      std::stable_sort(timed.begin(), timed.end(), [](const TimedEvent& a, const TimedEvent& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
      });
      for (const TimedEvent& t : timed) {
        const detail::TraceEvent& e = *t.event;
        nlohmann::json event = {{"ph", "X"},
                                {"pid", kPid},
                                {"tid", shard->thread_index},
                                {"ts", to_us(t.start_ns)},
                                {"dur", to_us(std::max(t.end_ns, t.start_ns) - t.start_ns)}};
        nlohmann::json args = nlohmann::json::object();
        if (e.kind == detail::TraceKind::Layer) {
          event["name"] = "layer " + std::to_string(e.layer);
          event["cat"] = "layer";
        } else {
          const std::string brick_name = e.kind == detail::TraceKind::Brick
                                             ? std::string(name(e.id))
                                             : state_->named[e.named_index].name;
          event["name"] = brick_name;
          event["cat"] = e.kind == detail::TraceKind::Brick ? name(category(e.id)) : "named";
          args["brick"] = brick_name;
          args["brick_id"] = e.kind == detail::TraceKind::Brick ? nlohmann::json(index(e.id)) : nlohmann::json(nullptr);
          args["elements"] = e.elements;
          args["bytes"] = e.bytes;
        }
        if (e.layer >= 0) args["layer"] = e.layer;
        event["args"] = std::move(args);
        events.push_back(std::move(event));
      }
    }
  }
  const nlohmann::json trace = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"generator", "brick"},
        {"clock", name(clock_)},
        {"ns_per_tick", ns_per_tick()},
        {"sync_mode", name(sync_mode())},
        {"trace_capacity_per_thread", capacity},
        {"dropped_events", dropped}}},
  };
  return trace.dump();
}

}  // namespace brick
