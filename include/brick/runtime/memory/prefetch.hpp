#pragma once
// Software prefetch by temporal locality, mapped onto x86's PREFETCHNTA/T2/T1/T0 through
// __builtin_prefetch. A prefetch is a hint: it never faults, even on an invalid address.
#include <cstddef>
#include <cstdint>

#include "brick/runtime/memory/cache_aligned.hpp"

namespace brick {

enum class Locality : int {
  NonTemporal = 0,  // PREFETCHNTA: streamed once, keep it out of the outer caches
  Low = 1,          // PREFETCHT2: into L3 (and further out)
  Moderate = 2,     // PREFETCHT1: into L2
  High = 3,         // PREFETCHT0: into L1, needed again soon
};

template <Locality L = Locality::High>
inline void prefetch_read(const void* address) noexcept {
  __builtin_prefetch(address, 0, static_cast<int>(L));
}

template <Locality L = Locality::High>
inline void prefetch_write(const void* address) noexcept {
  __builtin_prefetch(address, 1, static_cast<int>(L));
}

// The number of cache lines that [address, address + bytes) touches.
inline std::size_t cache_lines_spanned(const void* address, std::size_t bytes) noexcept {
  if (bytes == 0) return 0;
  const auto first = reinterpret_cast<std::uintptr_t>(address) / kCacheLineBytes;
  const auto last = (reinterpret_cast<std::uintptr_t>(address) + bytes - 1) / kCacheLineBytes;
  return last - first + 1;
}

// Prefetches every cache line of a region for reading; returns how many lines were requested.
template <Locality L = Locality::High>
inline std::size_t prefetch_range(const void* address, std::size_t bytes) noexcept {
  const std::size_t lines = cache_lines_spanned(address, bytes);
  const auto first_line = reinterpret_cast<std::uintptr_t>(address) & ~std::uintptr_t{kCacheLineBytes - 1};
  for (std::size_t i = 0; i < lines; ++i) {
    prefetch_read<L>(reinterpret_cast<const void*>(first_line + i * kCacheLineBytes));
  }
  return lines;
}

}  // namespace brick
