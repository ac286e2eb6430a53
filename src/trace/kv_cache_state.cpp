#include "brick/trace/kv_cache_state.hpp"

namespace brick::trace {

KvCacheState kv_cache_state(std::uint64_t step, const KvCacheStats& stats, std::uint64_t evictions) noexcept {
  return KvCacheState{.step = step,
                      .cells = stats.cells,
                      .used = stats.used,
                      .high_water = stats.high_water,
                      .evictions = evictions,
                      .free_runs = stats.free_runs,
                      .largest_free_run = stats.largest_free_run,
                      .fragmentation = stats.fragmentation};
}

}  // namespace brick::trace
