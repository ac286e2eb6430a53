#include "brick/runtime/memory/aligned_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "brick/runtime/memory/advice.hpp"
#include "runtime/os_error.hpp"

namespace brick {
namespace {

void check_size(std::size_t size, std::string_view what) {
  if (size == 0) throw InvalidArgument(fmt::format("{}: size must be positive, got 0", what));
}

std::size_t round_up(std::size_t size, std::size_t multiple, std::string_view what) {
  if (size > std::numeric_limits<std::size_t>::max() - (multiple - 1)) {
    throw InvalidArgument(fmt::format("{}: {} bytes cannot be rounded up to {}", what, size, multiple));
  }
  return (size + multiple - 1) / multiple * multiple;
}

// Running out of memory is a CapacityError (the request was too big for the machine now); any other
// refusal is the OS's, an IoError.
[[noreturn]] void throw_allocation_failure(std::string_view what, int error) {
  if (error == ENOMEM) throw CapacityError(fmt::format("{} failed: {}", what, detail::errno_text(error)));
  throw IoError(fmt::format("{} failed: {}", what, detail::errno_text(error)));
}

std::byte* map_anonymous(std::size_t bytes, std::string_view what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    throw_allocation_failure(fmt::format("{}: mmap of {} bytes", what, bytes), error);
  }
  return static_cast<std::byte*>(p);
}

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t size, std::size_t alignment) {
  check_size(size, "AlignedBuffer");
  if (!std::has_single_bit(alignment)) {
    throw InvalidArgument(fmt::format("AlignedBuffer: alignment must be a power of two, got {}", alignment));
  }
  const std::size_t effective = std::max(alignment, sizeof(void*));
  void* p = nullptr;
  if (const int error = posix_memalign(&p, effective, size); error != 0) {
    throw_allocation_failure(fmt::format("AlignedBuffer: allocating {} bytes aligned to {}", size, effective), error);
  }
  std::memset(p, 0, size);
  data_ = static_cast<std::byte*>(p);
  size_ = size;
  alignment_ = effective;
  source_ = Source::Heap;
}

AlignedBuffer AlignedBuffer::page_aligned(std::size_t size) {
  check_size(size, "AlignedBuffer::page_aligned");
  const std::size_t bytes = round_up(size, page_size(), "AlignedBuffer::page_aligned");
  AlignedBuffer buffer;
  buffer.data_ = map_anonymous(bytes, "AlignedBuffer::page_aligned");
  buffer.size_ = size;
  buffer.alignment_ = page_size();
  buffer.mapped_bytes_ = bytes;
  buffer.source_ = Source::Mapping;
  return buffer;
}

AlignedBuffer AlignedBuffer::huge_page_aligned(std::size_t size) {
  check_size(size, "AlignedBuffer::huge_page_aligned");
  const std::size_t bytes = round_up(size, kHugePageBytes, "AlignedBuffer::huge_page_aligned");
  if (bytes > std::numeric_limits<std::size_t>::max() - kHugePageBytes) {
    throw InvalidArgument(fmt::format("AlignedBuffer::huge_page_aligned: {} bytes is too large", size));
  }
  const std::size_t padded = bytes + kHugePageBytes;
  // Over-map by one huge page, then return the misaligned head and the unused tail to the kernel.
  std::byte* raw = map_anonymous(padded, "AlignedBuffer::huge_page_aligned");
  const auto raw_address = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (raw_address + kHugePageBytes - 1) & ~std::uintptr_t{kHugePageBytes - 1};
  const std::size_t head = aligned - raw_address;
  const std::size_t tail = padded - head - bytes;
  if (head != 0) munmap(raw, head);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);

  AlignedBuffer buffer;
  buffer.data_ = reinterpret_cast<std::byte*>(aligned);
  buffer.size_ = size;
  buffer.alignment_ = kHugePageBytes;
  buffer.mapped_bytes_ = bytes;
  buffer.source_ = Source::Mapping;
#ifdef MADV_HUGEPAGE
  // Refusal (EINVAL without transparent huge page support) is not an error: the block still works
  // with normal pages, and huge_pages_advised() tells which it got.
  buffer.huge_pages_advised_ = madvise(buffer.data_, bytes, MADV_HUGEPAGE) == 0;
#endif
  return buffer;
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      alignment_(std::exchange(other.alignment_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      source_(std::exchange(other.source_, Source::None)),
      huge_pages_advised_(std::exchange(other.huge_pages_advised_, false)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    alignment_ = std::exchange(other.alignment_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    source_ = std::exchange(other.source_, Source::None);
    huge_pages_advised_ = std::exchange(other.huge_pages_advised_, false);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { release(); }

void AlignedBuffer::release() noexcept {
  switch (source_) {
    case Source::Heap: std::free(data_); break;
    case Source::Mapping: munmap(data_, mapped_bytes_); break;
    case Source::None: break;
  }
  data_ = nullptr;
  size_ = 0;
  source_ = Source::None;
}

void AlignedBuffer::check_view(std::size_t element_size, std::size_t element_alignment) const {
  if (size_ % element_size != 0) {
    throw InvalidArgument(fmt::format("AlignedBuffer: {} bytes is not a whole number of {}-byte elements",
                                      size_, element_size));
  }
  if (alignment_ < element_alignment && size_ != 0) {
    throw InvalidArgument(fmt::format("AlignedBuffer: alignment {} is below the element's {}", alignment_,
                                      element_alignment));
  }
}

}  // namespace brick
