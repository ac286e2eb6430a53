#pragma once
// The size limit of buffers sized from user input. A request for more bytes than the machine has is
// refused before anything is allocated, and an allocation that fails anyway is reported, both as a
// CapacityError that names the size, instead of ending as std::bad_alloc, std::length_error or the
// OOM killer.
#include <cstddef>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace brick {

// Physical memory in bytes (sysconf: pages times page size), read once.
std::size_t physical_memory_bytes() noexcept;

// Throws CapacityError naming `owner`, `bytes` and the physical memory when bytes exceeds it.
void require_fits_in_memory(std::size_t bytes, std::string_view owner);

namespace detail {
[[noreturn]] void throw_no_memory_for(std::string_view owner, std::size_t count, std::size_t element_bytes);
}  // namespace detail

// `count` value-initialised elements, or CapacityError naming `owner` and the size when they do not
// fit in memory.
template <class T>
std::vector<T> allocate_vector(std::size_t count, std::string_view owner) {
  if (count > physical_memory_bytes() / sizeof(T)) detail::throw_no_memory_for(owner, count, sizeof(T));
  try {
    return std::vector<T>(count);
  } catch (const std::bad_alloc&) {
    detail::throw_no_memory_for(owner, count, sizeof(T));
  } catch (const std::length_error&) {
    detail::throw_no_memory_for(owner, count, sizeof(T));
  }
}

}  // namespace brick
