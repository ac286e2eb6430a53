#include "brick/runtime/buffer/watermarks.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {

void Watermarks::validate(std::string_view owner) const {
  if (capacity == 0) throw InvalidArgument(fmt::format("{}: capacity must be at least 1, got 0", owner));
  if (low == 0) {
    throw InvalidArgument(fmt::format(
        "{}: the low watermark must be at least 1 (writable again means pending < low), got 0", owner));
  }
  if (low >= high) {
    throw InvalidArgument(fmt::format("{}: the low watermark ({}) must be below the high one ({})",
                                      owner, low, high));
  }
  if (high > capacity) {
    throw InvalidArgument(fmt::format("{}: the high watermark ({}) must not exceed the capacity ({})",
                                      owner, high, capacity));
  }
}

}  // namespace brick
