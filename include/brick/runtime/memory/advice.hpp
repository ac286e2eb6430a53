#pragma once
// madvise() on a region of memory: tell the kernel how pages will be accessed so it can read ahead,
// stop reading ahead, fault pages in early, or drop them.
#include <cstddef>
#include <span>
#include <string_view>

namespace brick {

enum class Advice {
  Normal,      // MADV_NORMAL: the default read-ahead
  Sequential,  // MADV_SEQUENTIAL: aggressive read-ahead, pages can be dropped soon after use
  Random,      // MADV_RANDOM: no read-ahead
  WillNeed,    // MADV_WILLNEED: start reading the pages in now
  DontNeed,    // MADV_DONTNEED: drop the pages; private anonymous memory reads back as zeros
  PopulateRead,  // MADV_POPULATE_READ (Linux 5.14): fault every page in now, reading a file's pages
                 // in, so that later reads take no page faults (EINVAL on older kernels)
};

std::string_view name(Advice advice) noexcept;

// The system page size in bytes (sysconf, read once).
std::size_t page_size() noexcept;

// Applies `advice` to the pages of `region`. madvise works on whole pages, so the region is widened
// to page boundaries, except for DontNeed, which is narrowed to the pages lying wholly inside it (so
// it never discards a neighbour's bytes); a region with no whole page is then left alone.
// Throws InvalidArgument for an empty region or a value that is not an Advice, and IoError (with
// errno text, address and size) when the kernel refuses, e.g. ENOMEM for a range that is not mapped.
void advise(std::span<const std::byte> region, Advice advice);

}  // namespace brick
