#include "brick/runtime/memory/physical_memory.hpp"

#include <unistd.h>

#include <limits>

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {

std::size_t physical_memory_bytes() noexcept {
  static const std::size_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    std::size_t total = 0;
    // Unknown (-1) means no limit can be told: let the allocation itself decide.
    if (pages <= 0 || page <= 0 ||
        __builtin_mul_overflow(static_cast<std::size_t>(pages), static_cast<std::size_t>(page), &total)) {
      return std::numeric_limits<std::size_t>::max();
    }
    return total;
  }();
  return bytes;
}

void require_fits_in_memory(std::size_t bytes, std::string_view owner) {
  const std::size_t limit = physical_memory_bytes();
  if (bytes > limit) {
    throw CapacityError(fmt::format("{}: {} bytes ({:.1f} GiB) is more than this machine's {} bytes ({:.1f} GiB) "
                                    "of memory",
                                    owner, bytes, static_cast<double>(bytes) / (1u << 30), limit,
                                    static_cast<double>(limit) / (1u << 30)));
  }
}

namespace detail {

void throw_no_memory_for(std::string_view owner, std::size_t count, std::size_t element_bytes) {
  throw CapacityError(fmt::format("{}: no memory for {} x {} bytes (this machine has {} bytes)", owner, count,
                                  element_bytes, physical_memory_bytes()));
}

}  // namespace detail
}  // namespace brick
