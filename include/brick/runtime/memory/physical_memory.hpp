#pragma once
// The size limit of buffers sized from user input. A request for more bytes than the machine has is
// refused before anything is allocated, with a CapacityError that names the size, instead of ending
// later as std::bad_alloc, std::length_error or the OOM killer.
#include <cstddef>
#include <string_view>

namespace brick {

// Physical memory in bytes (sysconf: pages times page size), read once.
std::size_t physical_memory_bytes() noexcept;

// Throws CapacityError naming `owner`, `bytes` and the physical memory when bytes exceeds it.
void require_fits_in_memory(std::size_t bytes, std::string_view owner);

}  // namespace brick
