#pragma once
// One thread's part of a BrickProfiler. Only the owning thread writes it; readers on other threads
// take snapshots. Scalars of a brick are published under a sequence counter (odd while the owner
// updates them), so a snapshot sees one consistent execution count, sum, mean and variance; the
// histogram is read bucket by bucket and may lag the scalars by the executions in flight.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "brick/core/brick_id.hpp"
#include "brick/profile/brick_stats.hpp"
#include "brick/profile/latency_histogram.hpp"

namespace brick::detail {

class AtomicBrickStats {
 public:
  void add(std::uint64_t ns, std::uint64_t elements, std::uint64_t bytes, std::uint64_t flops) noexcept;
  BrickStats snapshot() const noexcept;

 private:
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> total_ns_{0};
  std::atomic<std::uint64_t> min_ns_{UINT64_MAX};
  std::atomic<std::uint64_t> max_ns_{0};
  std::atomic<std::uint64_t> elements_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> flops_{0};
  std::atomic<double> welford_mean_ns_{0.0};
  std::atomic<double> welford_m2_{0.0};
  std::array<std::atomic<std::uint64_t>, LatencyHistogram::kBucketCount> buckets_{};
};

// A stop() buffered in Deferred mode until end_layer().
struct PendingExecution {
  std::uint64_t start_ticks;
  std::uint64_t end_ticks;
  std::uint64_t elements;
  std::uint64_t bytes;
  std::uint64_t flops;
  BrickId id;
};

enum class TraceKind : std::uint8_t { Brick, NamedBrick, Layer };

struct TraceEvent {
  std::uint64_t start_ticks;
  std::uint64_t end_ticks;
  std::uint64_t elements;
  std::uint64_t bytes;
  std::int64_t layer;  // -1 outside a layer
  std::uint32_t named_index;
  TraceKind kind;
  BrickId id;
};

struct ProfilerShard {
  ProfilerShard(std::uint32_t serial, std::uint32_t thread_index, std::thread::id owner,
                std::size_t trace_capacity, std::size_t deferred_capacity);

  void push_trace(const TraceEvent& event) noexcept {
    const std::size_t size = trace_size.load(std::memory_order_relaxed);
    if (size < trace_capacity) {
      trace[size] = event;
      trace_size.store(size + 1, std::memory_order_release);
    } else {
      trace_dropped.store(trace_dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }

  const std::uint32_t serial;        // unique per process, never reused
  const std::uint32_t thread_index;  // tid in the Chrome trace
  const std::thread::id owner;

  std::array<AtomicBrickStats, kBrickIdCount> bricks;

  // Owner-only layer state.
  bool in_layer = false;
  bool layer_timed = false;  // the profiler was enabled at begin_layer()
  std::int64_t layer_index = -1;
  std::uint64_t layer_begin_ticks = 0;
  std::uint64_t layer_attributed_ns = 0;
  std::vector<PendingExecution> pending;  // capacity reserved up front, never grown
  const std::size_t pending_capacity;

  // Published layer totals.
  std::atomic<std::uint64_t> layers{0};
  std::atomic<std::uint64_t> layer_wall_ns{0};
  std::atomic<std::uint64_t> layer_attributed_total_ns{0};

  // Trace events are written once, then published by trace_size.
  std::size_t trace_capacity;
  std::unique_ptr<TraceEvent[]> trace;
  std::atomic<std::size_t> trace_size{0};
  std::atomic<std::uint64_t> trace_dropped{0};
};

}  // namespace brick::detail
