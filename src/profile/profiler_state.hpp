#pragma once
// The parts of a BrickProfiler that only the slow paths touch, all guarded by `mutex`.
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "brick/profile/profiler.hpp"
#include "profile/profiler_shard.hpp"

namespace brick::detail {

struct NamedBrick {
  std::string name;
  BrickStats stats;
};

struct ProfilerState {
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<ProfilerShard>> shards;
  std::size_t trace_capacity = 0;
  std::size_t deferred_capacity = 0;
  std::uint64_t epoch_ticks = 0;  // time zero of the Chrome trace
  std::deque<NamedBrick> named;   // stable addresses; indexed by ProfileTimer::named_index_
  std::map<std::string, std::uint32_t, std::less<>> named_lookup;
  std::array<std::optional<TokenBudget>, kBrickIdCount> budgets{};
  std::map<std::thread::id, std::string> thread_names;
  std::atomic<std::uint64_t> tokens{0};

  // Merges every shard's statistics of `id`; the caller holds `mutex`.
  BrickStats merged(BrickId id) const;
  // The name set with set_thread_name(), else "brick thread N"; the caller holds `mutex`.
  std::string thread_name(const ProfilerShard& shard) const;
};

// One row of a report: a BrickId or a named brick that ran at least once.
struct ReportRow {
  std::string name;
  std::optional<BrickId> id;  // nullopt for a named brick
  BrickCategory category;     // Other for a named brick
  BrickStats stats;
  std::optional<TokenBudget> budget;
};

// Everything the exports print, taken under one lock.
struct ProfileSnapshot {
  ClockSource clock = ClockSource::SteadyClock;
  double ns_per_tick = 1.0;
  SyncMode sync_mode = SyncMode::Eager;
  bool enabled = false;
  std::vector<ReportRow> bricks;                             // by total time, longest first
  std::array<BrickStats, kBrickCategoryCount> categories{};  // BrickIds only
  std::uint64_t total_ns = 0;
  std::uint64_t total_tokens = 0;
  LayerStats layers;
  std::array<std::uint64_t, kProfilerMisuseCount> misuse{};
  std::size_t trace_capacity_per_thread = 0;
  std::uint64_t trace_events = 0;
  std::uint64_t dropped_trace_events = 0;
};

ProfileSnapshot take_snapshot(const BrickProfiler& profiler, const ProfilerState& state);

}  // namespace brick::detail
