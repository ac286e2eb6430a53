#pragma once
// BrickProfiler: per-brick timing that can stay switched on in production.
//
// Hot path. start(BrickId) and stop(timer, ...) index a fixed per-thread array by BrickId: no
// hashing, no lock, no heap allocation, no exception. Each thread records into its own shard
// (created, with one allocation, the first time the thread records into this profiler); readers
// merge the shards off the hot path, so statistics can be read while other threads record.
//
// Sync modes. Eager closes every brick at stop(): exact per-brick numbers, a little more work per
// stop. Deferred only buffers (id, start, end) at stop() while a layer is open on the thread, and
// resolves the buffer at end_layer(). Either way a brick is charged exactly its own start-to-stop
// interval, so bricks that run back to back inside a layer sum to the layer's wall time. Outside a
// layer, or when the thread's buffer is full, Deferred resolves at stop() like Eager.
//
// Layers are per thread: begin_layer()/end_layer() act on the calling thread's shard.
//
// Defined behaviour for misuse (never undefined behaviour, never a crash):
//  - a disabled profiler: start() returns an inert timer without reading the clock, stop() of it,
//    record() and add_tokens() do nothing; a timer started while enabled is still recorded;
//    begin_layer()/end_layer() still check their pairing but time nothing;
//  - stop() of a timer that is not running (stopped twice, default-constructed, moved-from):
//  nothing
//    is recorded, ProfilerMisuse::StopInactiveTimer is counted;
//  - stop() on another thread than start(), or after reset(): ProfilerMisuse::ForeignTimer counted;
//  - start()/record() with an id that is not a brick (BrickId::COUNT):
//  ProfilerMisuse::InvalidBrickId;
//  - end_layer() without begin_layer(), begin_layer() inside a layer: StateError;
//  - stats(name) of a name never recorded, brick_stats(BrickId::COUNT), percentile q outside [0,
//  1]:
//    InvalidArgument; start("") is InvalidArgument;
//  - a brick or thread name that is not valid UTF-8 (start(name), set_thread_name()):
//    InvalidArgument, so that every export stays valid JSON and Prometheus text;
//  - options or set_sync_mode() with a value outside ClockSource or SyncMode: InvalidArgument;
//  - write_*() to a path that cannot be written: IoError.
// Misuse counts appear in summary(), to_json() and to_prometheus().
//
// reset(), set_trace_capacity() and destruction require that no thread is recording into the
// profiler at that moment (call them between runs).
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brick/core/brick_id.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/layer_observer.hpp"
#include "brick/core/op.hpp"
#include "brick/profile/brick_stats.hpp"
#include "brick/profile/profile_clock.hpp"
#include "brick/runtime/clock.hpp"

namespace brick {

enum class SyncMode : std::uint8_t { Eager, Deferred };

std::string_view name(SyncMode mode) noexcept;
// "eager" or "deferred", case-insensitive.
std::optional<SyncMode> parse_sync_mode(std::string_view text) noexcept;

enum class ProfilerMisuse : std::uint8_t { StopInactiveTimer, ForeignTimer, InvalidBrickId, COUNT };

inline constexpr std::size_t kProfilerMisuseCount = static_cast<std::size_t>(ProfilerMisuse::COUNT);

std::string_view name(ProfilerMisuse misuse) noexcept;

struct ProfilerOptions {
  ClockSource clock = default_clock_source();
  const Clock* manual_clock = nullptr;  // required when clock == ClockSource::Manual
  SyncMode sync_mode = SyncMode::Eager;
  bool enabled = true;
  // Chrome trace events kept per thread; 0 records no trace. Events past the bound are counted.
  std::size_t trace_capacity_per_thread = 0;
  // Deferred stops buffered per thread and layer before falling back to resolving at stop().
  std::size_t deferred_capacity_per_thread = 4096;
};

// Wall time of the layers closed by end_layer(), and how much of it the bricks recorded inside
// them account for (attributed / wall is 1 when bricks run back to back and do not nest).
struct LayerStats {
  std::uint64_t count = 0;
  std::uint64_t wall_ns = 0;
  std::uint64_t attributed_ns = 0;
};

namespace detail {
struct ProfilerShard;
struct ProfilerState;
// The calling thread's shard of the profiler it used last (one entry; a miss takes a lock).
struct ShardCache {
  std::uint64_t profiler_serial;
  ProfilerShard* shard;
  std::uint32_t shard_serial;
};
extern constinit thread_local ShardCache tls_shard_cache;
}  // namespace detail

// A running measurement, returned by start(). Move-only; stop it once, on the thread that started
// it.
class [[nodiscard]] ProfileTimer {
 public:
  ProfileTimer() noexcept = default;
  ProfileTimer(const ProfileTimer&) = delete;
  ProfileTimer& operator=(const ProfileTimer&) = delete;
  ProfileTimer(ProfileTimer&& other) noexcept { *this = std::move(other); }
  ProfileTimer& operator=(ProfileTimer&& other) noexcept {
    start_ticks_ = other.start_ticks_;
    shard_serial_ = other.shard_serial_;
    named_index_ = other.named_index_;
    id_ = other.id_;
    state_ = other.state_;
    other.state_ = State::Done;
    return *this;
  }

  bool running() const noexcept { return state_ == State::Running; }
  BrickId id() const noexcept { return id_; }

 private:
  friend class BrickProfiler;
  enum class State : std::uint8_t { Done, Inert, Running };
  static constexpr std::uint32_t kNoName = 0xFFFFFFFFu;

  ProfileTimer(State state, BrickId id, std::uint64_t start_ticks, std::uint32_t shard_serial,
               std::uint32_t named_index) noexcept
      : start_ticks_(start_ticks),
        shard_serial_(shard_serial),
        named_index_(named_index),
        id_(id),
        state_(state) {}

  std::uint64_t start_ticks_ = 0;
  std::uint32_t shard_serial_ = 0;
  std::uint32_t named_index_ = kNoName;
  BrickId id_ = BrickId::COUNT;
  State state_ = State::Done;
};

class BrickProfiler {
 public:
  explicit BrickProfiler(ProfilerOptions options = {});
  ~BrickProfiler();
  BrickProfiler(const BrickProfiler&) = delete;
  BrickProfiler& operator=(const BrickProfiler&) = delete;

  void enable() noexcept { enabled_.store(true, std::memory_order_relaxed); }
  void disable() noexcept { enabled_.store(false, std::memory_order_relaxed); }
  bool is_enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }

  // InvalidArgument for a value outside SyncMode.
  void set_sync_mode(SyncMode mode);
  SyncMode sync_mode() const noexcept { return sync_mode_.load(std::memory_order_relaxed); }

  ClockSource clock_source() const noexcept { return clock_; }
  double ns_per_tick() const noexcept { return converter_.ns_per_tick(); }

  // --- hot path -------------------------------------------------------------------------------
  ProfileTimer start(BrickId id) noexcept;
  void stop(ProfileTimer& timer, std::uint64_t elements = 0, std::uint64_t bytes = 0,
            std::uint64_t flops = 0) noexcept;
  void stop(ProfileTimer& timer, const OpCost& cost) noexcept;
  // A duration measured elsewhere; counted like a stop() (not in the Chrome trace: no timestamps).
  void record(BrickId id, std::uint64_t ns, std::uint64_t elements = 0, std::uint64_t bytes = 0,
              std::uint64_t flops = 0) noexcept;
  void add_tokens(std::uint64_t tokens) noexcept;

  // --- slow path: bricks without an id -----------------------------------------------------------
  // A name (or alias) of a BrickId takes the BrickId path; any other name gets its own statistics,
  // allocated on first use and updated under a lock, always resolved at stop().
  ProfileTimer start(std::string_view brick_name);

  // --- layers (per thread) -----------------------------------------------------------------------
  void begin_layer(std::uint32_t index);
  void end_layer();

  // --- execution graph -------------------------------------------------------------------------
  // Graph capture: while a recorder is set, every ProfilingObserver of this profiler passes each of
  // its hooks on to it (the execution graph's GraphRecorder, graph/graph_recorder.hpp), so one
  // observer drives the profile and the graph. It sees a brick begin before the profiler times it
  // and end after, so that its own work (checksums) is not charged to the brick. The recorder must
  // outlive its use; set and clear it between runs. Independent of enable()/disable().
  void enable_graph(LayerObserver& recorder) noexcept { graph_.store(&recorder, std::memory_order_relaxed); }
  void disable_graph() noexcept { graph_.store(nullptr, std::memory_order_relaxed); }
  LayerObserver* graph() const noexcept { return graph_.load(std::memory_order_relaxed); }

  // --- reading (merges all threads; safe while others record)
  // -------------------------------------
  std::uint64_t total_ns() const;      // summed durations of every brick, named ones included
  std::uint64_t total_tokens() const;  // summed add_tokens()
  BrickStats brick_stats(BrickId id) const;
  BrickStats category_stats(BrickCategory category) const;
  // A BrickId name or alias, else a named brick; InvalidArgument if neither.
  BrickStats stats(std::string_view brick_name) const;
  std::vector<std::string> named_bricks() const;  // sorted
  LayerStats layer_stats() const;
  std::uint64_t misuse_count(ProfilerMisuse misuse) const noexcept;
  std::uint64_t trace_event_count() const;
  std::uint64_t dropped_trace_events() const;

  // --- configuration
  // -------------------------------------------------------------------------------
  void set_budget(BrickId id, TokenBudget budget);
  void clear_budget(BrickId id);
  std::optional<TokenBudget> budget(BrickId id) const;
  // Names the calling thread in the Chrome trace (kept across reset()).
  void set_thread_name(std::string_view thread_name);
  // Discards recorded trace events; see the note on quiescence above.
  void set_trace_capacity(std::size_t events_per_thread);
  std::size_t trace_capacity() const;
  // Forgets every measurement, layer and misuse count; keeps options, budgets and thread names.
  void reset();

  // --- exports
  // ------------------------------------------------------------------------------------- Human
  // table sorted by total time, then a table per category.
  std::string summary() const;
  // JSON document, schema "brick.profile" version 1 (documented in src/profile/profile_json.cpp).
  std::string to_json() const;
  // Chrome Trace Event Format, object form: opens in ui.perfetto.dev and chrome://tracing.
  std::string to_chrome_trace() const;
  // Prometheus text exposition format 0.0.4.
  std::string to_prometheus() const;
  // Each writes the matching export, replacing `path` atomically (runtime/atomic_file.hpp): a
  // failed write leaves an existing file as it was; IoError carries the errno text.
  void write_json(const std::filesystem::path& path) const;
  void write_chrome_trace(const std::filesystem::path& path) const;
  void write_prometheus(const std::filesystem::path& path) const;

 private:
  std::uint64_t now_ticks() const noexcept;
  detail::ShardCache* current_shard() noexcept;
  detail::ShardCache* attach_thread() noexcept;
  void finish(const ProfileTimer& timer, std::uint64_t end_ticks, std::uint64_t elements,
              std::uint64_t bytes, std::uint64_t flops) noexcept;
  void count_misuse(ProfilerMisuse misuse) noexcept {
    misuse_[static_cast<std::size_t>(misuse)].fetch_add(1, std::memory_order_relaxed);
  }

  std::atomic<bool> enabled_;
  std::atomic<SyncMode> sync_mode_;
  std::atomic<LayerObserver*> graph_{nullptr};
  const ClockSource clock_;
  const Clock* const manual_clock_;
  const TickConverter converter_;
  std::atomic<std::uint64_t> serial_;
  std::array<std::atomic<std::uint64_t>, kProfilerMisuseCount> misuse_{};
  std::unique_ptr<detail::ProfilerState> state_;
};

// Times the enclosing scope as one execution of a brick.
class ProfileScope {
 public:
  ProfileScope(BrickProfiler& profiler, BrickId id, std::uint64_t elements = 0,
               std::uint64_t bytes = 0, std::uint64_t flops = 0) noexcept
      : profiler_(profiler),
        timer_(profiler.start(id)),
        elements_(elements),
        bytes_(bytes),
        flops_(flops) {}
  ProfileScope(BrickProfiler& profiler, std::string_view brick_name, std::uint64_t elements = 0,
               std::uint64_t bytes = 0, std::uint64_t flops = 0)
      : profiler_(profiler),
        timer_(profiler.start(brick_name)),
        elements_(elements),
        bytes_(bytes),
        flops_(flops) {}
  ~ProfileScope() { profiler_.stop(timer_, elements_, bytes_, flops_); }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

  // The work done, when only known inside the scope.
  void set_work(std::uint64_t elements, std::uint64_t bytes = 0, std::uint64_t flops = 0) noexcept {
    elements_ = elements;
    bytes_ = bytes;
    flops_ = flops;
  }

 private:
  BrickProfiler& profiler_;
  ProfileTimer timer_;
  std::uint64_t elements_;
  std::uint64_t bytes_;
  std::uint64_t flops_;
};

#define BRICK_PROFILE_CONCAT_INNER(a, b) a##b
#define BRICK_PROFILE_CONCAT(a, b) BRICK_PROFILE_CONCAT_INNER(a, b)
// BRICK_PROFILE_SCOPE(profiler, BrickId::RmsNorm, tokens[, bytes, flops]) times the rest of the
// scope.
#define BRICK_PROFILE_SCOPE(...) \
  ::brick::ProfileScope BRICK_PROFILE_CONCAT(brick_profile_scope_, __LINE__)(__VA_ARGS__)

// --- inline hot path
// ---------------------------------------------------------------------------------

inline std::uint64_t BrickProfiler::now_ticks() const noexcept {
  switch (clock_) {
    case ClockSource::Tsc:
      return __rdtsc();
    case ClockSource::SteadyClock:
      return read_steady_clock_ns();
    case ClockSource::Manual:
      break;
  }
  return static_cast<std::uint64_t>(manual_clock_->now().time_since_epoch().count());
}

inline detail::ShardCache* BrickProfiler::current_shard() noexcept {
  detail::ShardCache& cache = detail::tls_shard_cache;
  if (cache.profiler_serial == serial_.load(std::memory_order_relaxed)) [[likely]]
    return &cache;
  return attach_thread();
}

inline ProfileTimer BrickProfiler::start(BrickId id) noexcept {
  if (!enabled_.load(std::memory_order_relaxed)) return {ProfileTimer::State::Inert, id, 0, 0, 0};
  const detail::ShardCache* cache = current_shard();
  if (index(id) >= kBrickIdCount || cache == nullptr) [[unlikely]] {
    if (cache != nullptr) count_misuse(ProfilerMisuse::InvalidBrickId);
    return {ProfileTimer::State::Inert, id, 0, 0, 0};
  }
  return {ProfileTimer::State::Running, id, now_ticks(), cache->shard_serial,
          ProfileTimer::kNoName};
}

inline void BrickProfiler::stop(ProfileTimer& timer, std::uint64_t elements, std::uint64_t bytes,
                                std::uint64_t flops) noexcept {
  if (timer.state_ != ProfileTimer::State::Running) [[unlikely]] {
    if (timer.state_ == ProfileTimer::State::Done) count_misuse(ProfilerMisuse::StopInactiveTimer);
    return;
  }
  const std::uint64_t end_ticks = now_ticks();
  timer.state_ = ProfileTimer::State::Done;
  finish(timer, end_ticks, elements, bytes, flops);
}

}  // namespace brick
