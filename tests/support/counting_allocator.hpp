#pragma once
// Counts calls of the global allocation functions. counting_allocator.cpp replaces them, so it is
// linked only into the test binaries that check a path allocates nothing (profile, trace).
#include <cstdint>

namespace brick::test {

// Every operator new of any form so far, in any thread.
std::uint64_t allocations() noexcept;

}  // namespace brick::test
