#pragma once
// KvCacheState: the KV cache's occupancy at one decoding step, from KvCache::stats()
// (runtime/kv_cache/kv_cache.hpp) plus the evictions the caller made (cells it removed to make room:
// seq_rm or a context shift), which the cache itself does not count.
#include <cstdint>

#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick::trace {

struct KvCacheState {
  std::uint64_t step = 0;
  std::uint64_t cells = 0;
  std::uint64_t used = 0;
  std::uint64_t high_water = 0;
  std::uint64_t evictions = 0;
  std::uint64_t free_runs = 0;
  std::uint64_t largest_free_run = 0;
  double fragmentation = 0.0;  // KvCacheStats::fragmentation, in [0, 1]
  bool operator==(const KvCacheState&) const = default;
};

KvCacheState kv_cache_state(std::uint64_t step, const KvCacheStats& stats, std::uint64_t evictions) noexcept;

}  // namespace brick::trace
