#pragma once
// How many CPUs this process may run on, and how many physical cores they belong to (SMT siblings
// counted once): the default thread count of compute-bound work, as llama.cpp picks it.
#include <cstddef>

namespace brick {

// CPUs in the process's affinity mask (at least 1).
std::size_t usable_cpus() noexcept;

// Distinct (package, core) pairs among the usable CPUs, from /sys/devices/system/cpu; the usable
// CPU count where the topology cannot be read. At least 1.
std::size_t physical_cores() noexcept;

}  // namespace brick
