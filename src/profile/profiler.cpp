#include "brick/profile/profiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "brick/core/error.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "profile/profiler_state.hpp"
#include "profile/utf8.hpp"

namespace brick {
namespace detail {

constinit thread_local ShardCache tls_shard_cache{0, nullptr, 0};

namespace {

// Serials start at 1 so a thread's zeroed cache never matches a profiler.
std::atomic<std::uint64_t> next_profiler_serial{1};
std::atomic<std::uint32_t> next_shard_serial{1};

void bump(std::atomic<std::uint64_t>& value, std::uint64_t by) noexcept {
  value.store(value.load(std::memory_order_relaxed) + by, std::memory_order_release);
}

std::uint64_t elapsed(std::uint64_t start_ticks, std::uint64_t end_ticks) noexcept {
  return end_ticks > start_ticks ? end_ticks - start_ticks : 0;
}

}  // namespace

// The release stores order the odd sequence value before every field they publish, and the
// final release store publishes all of them; snapshot() pairs them with acquire loads.
void AtomicBrickStats::add(std::uint64_t ns, std::uint64_t elements, std::uint64_t bytes,
                           std::uint64_t flops) noexcept {
  const std::uint64_t sequence = sequence_.load(std::memory_order_relaxed);
  sequence_.store(sequence + 1, std::memory_order_relaxed);
  const std::uint64_t count = count_.load(std::memory_order_relaxed) + 1;
  count_.store(count, std::memory_order_release);
  bump(total_ns_, ns);
  if (ns < min_ns_.load(std::memory_order_relaxed)) min_ns_.store(ns, std::memory_order_release);
  if (ns > max_ns_.load(std::memory_order_relaxed)) max_ns_.store(ns, std::memory_order_release);
  bump(elements_, elements);
  bump(bytes_, bytes);
  bump(flops_, flops);
  double mean = welford_mean_ns_.load(std::memory_order_relaxed);
  double m2 = welford_m2_.load(std::memory_order_relaxed);
  welford_step(count, static_cast<double>(ns), mean, m2);
  welford_mean_ns_.store(mean, std::memory_order_release);
  welford_m2_.store(m2, std::memory_order_release);
  bump(buckets_[LatencyHistogram::bucket_of(ns)], 1);
  sequence_.store(sequence + 2, std::memory_order_release);
}

BrickStats AtomicBrickStats::snapshot() const noexcept {
  BrickStats stats;
  for (;;) {
    const std::uint64_t before = sequence_.load(std::memory_order_acquire);
    if ((before & 1) == 0) {
      stats.count = count_.load(std::memory_order_acquire);
      stats.total_ns = total_ns_.load(std::memory_order_acquire);
      stats.min_ns = min_ns_.load(std::memory_order_acquire);
      stats.max_ns = max_ns_.load(std::memory_order_acquire);
      stats.elements = elements_.load(std::memory_order_acquire);
      stats.bytes = bytes_.load(std::memory_order_acquire);
      stats.flops = flops_.load(std::memory_order_acquire);
      stats.welford_mean_ns = welford_mean_ns_.load(std::memory_order_acquire);
      stats.welford_m2 = welford_m2_.load(std::memory_order_acquire);
      if (sequence_.load(std::memory_order_relaxed) == before) break;
    }
    std::this_thread::yield();
  }
  if (stats.count == 0) stats.min_ns = 0;
  for (std::size_t bucket = 0; bucket < LatencyHistogram::kBucketCount; ++bucket) {
    stats.histogram.add_bucket(bucket, buckets_[bucket].load(std::memory_order_acquire));
  }
  return stats;
}

ProfilerShard::ProfilerShard(std::uint32_t serial_number, std::uint32_t index,
                             std::thread::id owner_id, std::size_t trace_events,
                             std::size_t deferred_capacity)
    : serial(serial_number),
      thread_index(index),
      owner(owner_id),
      pending_capacity(deferred_capacity),
      trace_capacity(trace_events),
      trace(trace_events > 0 ? std::make_unique_for_overwrite<TraceEvent[]>(trace_events)
                             : nullptr) {
  pending.reserve(deferred_capacity);
}

BrickStats ProfilerState::merged(BrickId id) const {
  BrickStats total;
  for (const auto& shard : shards) total.merge(shard->bricks[index(id)].snapshot());
  return total;
}

std::string ProfilerState::thread_name(const ProfilerShard& shard) const {
  const auto it = thread_names.find(shard.owner);
  return it != thread_names.end() ? it->second : fmt::format("brick thread {}", shard.thread_index);
}

namespace {

// Charges one execution to the owning thread's shard.
void resolve(ProfilerShard& shard, const TickConverter& converter, BrickId id,
             std::uint64_t start_ticks, std::uint64_t end_ticks, std::uint64_t elements,
             std::uint64_t bytes, std::uint64_t flops) noexcept {
  const std::uint64_t ns = converter.to_ns(elapsed(start_ticks, end_ticks));
  shard.bricks[index(id)].add(ns, elements, bytes, flops);
  if (shard.in_layer) shard.layer_attributed_ns += ns;
  if (shard.trace_capacity > 0) {
    shard.push_trace({start_ticks, end_ticks, elements, bytes, shard.layer_index, 0xFFFFFFFFu,
                      TraceKind::Brick, id});
  }
}

}  // namespace
}  // namespace detail

using detail::ProfilerShard;
using detail::ProfilerState;

std::string_view name(SyncMode mode) noexcept {
  return mode == SyncMode::Eager ? "eager" : "deferred";
}

std::optional<SyncMode> parse_sync_mode(std::string_view text) noexcept {
  std::string lowered;
  for (const char c : text)
    lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lowered == "eager") return SyncMode::Eager;
  if (lowered == "deferred") return SyncMode::Deferred;
  return std::nullopt;
}

std::string_view name(ProfilerMisuse misuse) noexcept {
  switch (misuse) {
    case ProfilerMisuse::StopInactiveTimer:
      return "stop_inactive_timer";
    case ProfilerMisuse::ForeignTimer:
      return "foreign_timer";
    case ProfilerMisuse::InvalidBrickId:
    case ProfilerMisuse::COUNT:
      break;
  }
  return "invalid_brick_id";
}

namespace {

double ns_per_tick_of(ClockSource clock) {
  return clock == ClockSource::Tsc ? tsc_ns_per_tick() : 1.0;
}

// now_ticks() reads the manual clock for any source it does not know: an unchecked value would
// dereference a null clock.
ClockSource checked_clock(ClockSource clock) {
  if (clock != ClockSource::Tsc && clock != ClockSource::SteadyClock && clock != ClockSource::Manual) {
    throw InvalidArgument(fmt::format("BrickProfiler: {} is not a ClockSource", static_cast<int>(clock)));
  }
  return clock;
}

const Clock* checked_manual_clock(const ProfilerOptions& options) {
  if (options.clock == ClockSource::Manual && options.manual_clock == nullptr) {
    throw InvalidArgument("BrickProfiler: ClockSource::Manual needs ProfilerOptions::manual_clock");
  }
  return options.manual_clock;
}

SyncMode checked_sync_mode(SyncMode mode) {
  if (mode != SyncMode::Eager && mode != SyncMode::Deferred) {
    throw InvalidArgument(fmt::format("BrickProfiler: {} is not a SyncMode", static_cast<int>(mode)));
  }
  return mode;
}

}  // namespace

BrickProfiler::BrickProfiler(ProfilerOptions options)
    : enabled_(options.enabled),
      sync_mode_(checked_sync_mode(options.sync_mode)),
      clock_(checked_clock(options.clock)),
      manual_clock_(checked_manual_clock(options)),
      converter_(ns_per_tick_of(options.clock)),
      serial_(detail::next_profiler_serial.fetch_add(1)),
      state_(std::make_unique<ProfilerState>()) {
  state_->trace_capacity = options.trace_capacity_per_thread;
  state_->deferred_capacity = options.deferred_capacity_per_thread;
  state_->epoch_ticks = now_ticks();
}

BrickProfiler::~BrickProfiler() = default;

detail::ShardCache* BrickProfiler::attach_thread() noexcept {
  try {
    const std::lock_guard lock(state_->mutex);
    const std::thread::id self = std::this_thread::get_id();
    auto it = std::find_if(state_->shards.begin(), state_->shards.end(),
                           [&](const auto& shard) { return shard->owner == self; });
    if (it == state_->shards.end()) {
      state_->shards.push_back(std::make_unique<ProfilerShard>(
          detail::next_shard_serial.fetch_add(1), static_cast<std::uint32_t>(state_->shards.size()),
          self, state_->trace_capacity, state_->deferred_capacity));
      it = std::prev(state_->shards.end());
    }
    detail::tls_shard_cache = {serial_.load(std::memory_order_relaxed), it->get(), (*it)->serial};
    return &detail::tls_shard_cache;
  } catch (...) {
    return nullptr;  // out of memory: the caller records nothing rather than failing its brick
  }
}

void BrickProfiler::finish(const ProfileTimer& timer, std::uint64_t end_ticks,
                           std::uint64_t elements, std::uint64_t bytes,
                           std::uint64_t flops) noexcept {
  const detail::ShardCache* cache = current_shard();
  if (cache == nullptr || cache->shard_serial != timer.shard_serial_) {
    count_misuse(ProfilerMisuse::ForeignTimer);
    return;
  }
  ProfilerShard& shard = *cache->shard;
  if (timer.named_index_ != ProfileTimer::kNoName) {
    const std::uint64_t ns = converter_.to_ns(detail::elapsed(timer.start_ticks_, end_ticks));
    {
      const std::lock_guard lock(state_->mutex);
      state_->named[timer.named_index_].stats.add(ns, elements, bytes, flops);
    }
    if (shard.in_layer) shard.layer_attributed_ns += ns;
    if (shard.trace_capacity > 0) {
      shard.push_trace({timer.start_ticks_, end_ticks, elements, bytes, shard.layer_index,
                        timer.named_index_, detail::TraceKind::NamedBrick, timer.id_});
    }
    return;
  }
  if (sync_mode() == SyncMode::Deferred && shard.in_layer &&
      shard.pending.size() < shard.pending_capacity) {
    shard.pending.push_back({timer.start_ticks_, end_ticks, elements, bytes, flops, timer.id_});
    return;
  }
  detail::resolve(shard, converter_, timer.id_, timer.start_ticks_, end_ticks, elements, bytes,
                  flops);
}

namespace {

// Negative and NaN become 0, values past the range saturate: the conversion itself must not be UB.
std::uint64_t saturating_count(double value) noexcept {
  constexpr double kLimit = 18446744073709549568.0;  // the largest double below 2^64
  if (!(value > 0.0)) return 0;
  return value >= kLimit ? UINT64_MAX : static_cast<std::uint64_t>(value);
}

}  // namespace

void BrickProfiler::stop(ProfileTimer& timer, const OpCost& cost) noexcept {
  stop(timer, cost.tokens, saturating_count(cost.bytes), saturating_count(cost.flops));
}

void BrickProfiler::record(BrickId id, std::uint64_t ns, std::uint64_t elements,
                           std::uint64_t bytes, std::uint64_t flops) noexcept {
  if (!is_enabled()) return;
  detail::ShardCache* cache = current_shard();
  if (cache == nullptr) return;
  if (index(id) >= kBrickIdCount) {
    count_misuse(ProfilerMisuse::InvalidBrickId);
    return;
  }
  ProfilerShard& shard = *cache->shard;
  shard.bricks[index(id)].add(ns, elements, bytes, flops);
  if (shard.in_layer) shard.layer_attributed_ns += ns;
}

void BrickProfiler::add_tokens(std::uint64_t tokens) noexcept {
  if (is_enabled()) state_->tokens.fetch_add(tokens, std::memory_order_relaxed);
}

void BrickProfiler::set_sync_mode(SyncMode mode) {
  sync_mode_.store(checked_sync_mode(mode), std::memory_order_relaxed);
}

ProfileTimer BrickProfiler::start(std::string_view brick_name) {
  if (brick_name.empty())
    throw InvalidArgument("BrickProfiler::start: a brick name must not be empty");
  if (const auto id = brick_id_from_name(brick_name)) return start(*id);
  if (!is_enabled()) return {ProfileTimer::State::Inert, BrickId::COUNT, 0, 0, 0};
  const detail::ShardCache* cache = current_shard();
  if (cache == nullptr)
    throw CapacityError("BrickProfiler: out of memory for this thread's statistics");
  std::uint32_t named_index = 0;
  {
    const std::lock_guard lock(state_->mutex);
    const auto it = state_->named_lookup.find(brick_name);
    if (it != state_->named_lookup.end()) {
      named_index = it->second;
    } else {
      detail::require_utf8(brick_name, "BrickProfiler::start: the brick name");
      named_index = static_cast<std::uint32_t>(state_->named.size());
      state_->named.push_back({std::string(brick_name), {}});
      state_->named_lookup.emplace(std::string(brick_name), named_index);
    }
  }
  return {ProfileTimer::State::Running, BrickId::COUNT, now_ticks(), cache->shard_serial,
          named_index};
}

void BrickProfiler::begin_layer(std::uint32_t layer_index) {
  detail::ShardCache* cache = current_shard();
  if (cache == nullptr)
    throw CapacityError("BrickProfiler: out of memory for this thread's statistics");
  ProfilerShard& shard = *cache->shard;
  if (shard.in_layer) {
    throw StateError(fmt::format(
        "begin_layer({}): layer {} is still open on this thread; call end_layer() first",
        layer_index, shard.layer_index));
  }
  shard.in_layer = true;
  shard.layer_index = layer_index;
  shard.layer_attributed_ns = 0;
  shard.layer_timed = is_enabled();
  shard.layer_begin_ticks = shard.layer_timed ? now_ticks() : 0;
}

void BrickProfiler::end_layer() {
  detail::ShardCache* cache = current_shard();
  if (cache == nullptr)
    throw CapacityError("BrickProfiler: out of memory for this thread's statistics");
  ProfilerShard& shard = *cache->shard;
  if (!shard.in_layer) throw StateError("end_layer(): no layer was begun on this thread");
  const bool timed = shard.layer_timed && is_enabled();
  const std::uint64_t end_ticks = timed ? now_ticks() : 0;
  for (const detail::PendingExecution& e : shard.pending) {
    detail::resolve(shard, converter_, e.id, e.start_ticks, e.end_ticks, e.elements, e.bytes,
                    e.flops);
  }
  shard.pending.clear();
  if (timed) {
    const std::uint64_t wall_ns =
        converter_.to_ns(detail::elapsed(shard.layer_begin_ticks, end_ticks));
    detail::bump(shard.layers, 1);
    detail::bump(shard.layer_wall_ns, wall_ns);
    detail::bump(shard.layer_attributed_total_ns, shard.layer_attributed_ns);
    if (shard.trace_capacity > 0) {
      shard.push_trace({shard.layer_begin_ticks, end_ticks, 0, 0, shard.layer_index,
                        ProfileTimer::kNoName, detail::TraceKind::Layer, BrickId::COUNT});
    }
  }
  shard.in_layer = false;
  shard.layer_index = -1;
}

std::uint64_t BrickProfiler::total_ns() const {
  const std::lock_guard lock(state_->mutex);
  std::uint64_t total = 0;
  for (const BrickId id : all_brick_ids()) total += state_->merged(id).total_ns;
  for (const auto& named : state_->named) total += named.stats.total_ns;
  return total;
}

std::uint64_t BrickProfiler::total_tokens() const {
  return state_->tokens.load(std::memory_order_relaxed);
}

BrickStats BrickProfiler::brick_stats(BrickId id) const {
  if (index(id) >= kBrickIdCount) {
    throw InvalidArgument(fmt::format("brick_stats: {} is not a brick id", index(id)));
  }
  const std::lock_guard lock(state_->mutex);
  return state_->merged(id);
}

BrickStats BrickProfiler::category_stats(BrickCategory brick_category) const {
  if (static_cast<std::size_t>(brick_category) >= kBrickCategoryCount) {
    throw InvalidArgument("category_stats: not a brick category");
  }
  const std::lock_guard lock(state_->mutex);
  BrickStats total;
  for (const BrickId id : all_brick_ids()) {
    if (category(id) == brick_category) total.merge(state_->merged(id));
  }
  return total;
}

BrickStats BrickProfiler::stats(std::string_view brick_name) const {
  if (const auto id = brick_id_from_name(brick_name)) return brick_stats(*id);
  const std::lock_guard lock(state_->mutex);
  const auto it = state_->named_lookup.find(brick_name);
  if (it == state_->named_lookup.end()) {
    throw InvalidArgument(fmt::format(
        "stats: no brick named '{}' (neither a BrickId nor a recorded name)", brick_name));
  }
  return state_->named[it->second].stats;
}

std::vector<std::string> BrickProfiler::named_bricks() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<std::string> names;
  for (const auto& [brick_name, named_index] : state_->named_lookup) names.push_back(brick_name);
  return names;
}

LayerStats BrickProfiler::layer_stats() const {
  const std::lock_guard lock(state_->mutex);
  LayerStats total;
  for (const auto& shard : state_->shards) {
    total.count += shard->layers.load(std::memory_order_acquire);
    total.wall_ns += shard->layer_wall_ns.load(std::memory_order_acquire);
    total.attributed_ns += shard->layer_attributed_total_ns.load(std::memory_order_acquire);
  }
  return total;
}

std::uint64_t BrickProfiler::misuse_count(ProfilerMisuse misuse) const noexcept {
  const auto i = static_cast<std::size_t>(misuse);
  return i < kProfilerMisuseCount ? misuse_[i].load(std::memory_order_relaxed) : 0;
}

std::uint64_t BrickProfiler::trace_event_count() const {
  const std::lock_guard lock(state_->mutex);
  std::uint64_t total = 0;
  for (const auto& shard : state_->shards)
    total += shard->trace_size.load(std::memory_order_acquire);
  return total;
}

std::uint64_t BrickProfiler::dropped_trace_events() const {
  const std::lock_guard lock(state_->mutex);
  std::uint64_t total = 0;
  for (const auto& shard : state_->shards)
    total += shard->trace_dropped.load(std::memory_order_relaxed);
  return total;
}

void BrickProfiler::set_budget(BrickId id, TokenBudget token_budget) {
  if (index(id) >= kBrickIdCount) throw InvalidArgument("set_budget: not a brick id");
  const std::lock_guard lock(state_->mutex);
  state_->budgets[index(id)] = token_budget;
}

void BrickProfiler::clear_budget(BrickId id) {
  if (index(id) >= kBrickIdCount) throw InvalidArgument("clear_budget: not a brick id");
  const std::lock_guard lock(state_->mutex);
  state_->budgets[index(id)].reset();
}

std::optional<TokenBudget> BrickProfiler::budget(BrickId id) const {
  if (index(id) >= kBrickIdCount) throw InvalidArgument("budget: not a brick id");
  const std::lock_guard lock(state_->mutex);
  return state_->budgets[index(id)];
}

void BrickProfiler::set_thread_name(std::string_view thread_name) {
  detail::require_utf8(thread_name, "BrickProfiler::set_thread_name: the name");
  const std::lock_guard lock(state_->mutex);
  state_->thread_names[std::this_thread::get_id()] = std::string(thread_name);
}

void BrickProfiler::set_trace_capacity(std::size_t events_per_thread) {
  const std::lock_guard lock(state_->mutex);
  state_->trace_capacity = events_per_thread;
  for (const auto& shard : state_->shards) {
    shard->trace = events_per_thread > 0
                       ? std::make_unique_for_overwrite<detail::TraceEvent[]>(events_per_thread)
                       : nullptr;
    shard->trace_capacity = events_per_thread;
    shard->trace_size.store(0, std::memory_order_release);
    shard->trace_dropped.store(0, std::memory_order_relaxed);
  }
}

std::size_t BrickProfiler::trace_capacity() const {
  const std::lock_guard lock(state_->mutex);
  return state_->trace_capacity;
}

void BrickProfiler::reset() {
  const std::lock_guard lock(state_->mutex);
  state_->shards.clear();
  state_->named.clear();
  state_->named_lookup.clear();
  state_->tokens.store(0, std::memory_order_relaxed);
  for (auto& count : misuse_) count.store(0, std::memory_order_relaxed);
  state_->epoch_ticks = now_ticks();
  serial_.store(detail::next_profiler_serial.fetch_add(1), std::memory_order_relaxed);
}

void BrickProfiler::write_json(const std::filesystem::path& path) const {
  write_file_atomically(path, to_json());
}

void BrickProfiler::write_chrome_trace(const std::filesystem::path& path) const {
  write_file_atomically(path, to_chrome_trace());
}

void BrickProfiler::write_prometheus(const std::filesystem::path& path) const {
  write_file_atomically(path, to_prometheus());
}

}  // namespace brick
