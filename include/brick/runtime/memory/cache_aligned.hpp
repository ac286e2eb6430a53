#pragma once
// CacheAligned<T>: a value alone on its cache line(s), so that per-thread counters or flags that sit
// next to each other in an array do not false-share. The alignment also pads the size up to a whole
// number of lines.
#include <cstddef>
#include <utility>

namespace brick {

// x86-64 cache line. std::hardware_destructive_interference_size is not used because its value may
// change with compiler flags (g++ warns about it in headers shared across translation units).
inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
struct alignas(kCacheLineBytes) CacheAligned {
  T value{};

  CacheAligned() = default;
  template <class... Args>
  explicit CacheAligned(std::in_place_t, Args&&... args) : value(std::forward<Args>(args)...) {}

  T& operator*() noexcept { return value; }
  const T& operator*() const noexcept { return value; }
  T* operator->() noexcept { return &value; }
  const T* operator->() const noexcept { return &value; }
};

}  // namespace brick
