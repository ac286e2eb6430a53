#pragma once
// AlignedBuffer: a zero-filled block of bytes with a guaranteed alignment and a single owner.
// Three kinds: a heap block at any power-of-two alignment (cache line by default), an anonymous
// page-aligned mapping, and a mapping aligned to a 2 MiB huge page and advised MADV_HUGEPAGE so that
// transparent huge pages back it where the kernel offers them.
#include <cstddef>
#include <span>
#include <type_traits>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/cache_aligned.hpp"

namespace brick {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

class AlignedBuffer {
 public:
  AlignedBuffer() noexcept = default;

  // A heap block of `size` bytes at `alignment`, which must be a power of two.
  // Throws InvalidArgument for size 0 or a bad alignment, CapacityError (naming the size) when the
  // memory is not there, IoError when the OS refuses for another reason. The same for the mappings.
  explicit AlignedBuffer(std::size_t size, std::size_t alignment = kCacheLineBytes);

  static AlignedBuffer cache_line_aligned(std::size_t size) { return AlignedBuffer(size); }
  // Anonymous mappings, rounded up to whole pages (size() still reports the requested size).
  static AlignedBuffer page_aligned(std::size_t size);
  static AlignedBuffer huge_page_aligned(std::size_t size);

  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t alignment() const noexcept { return alignment_; }
  bool empty() const noexcept { return size_ == 0; }
  // True when the kernel accepted MADV_HUGEPAGE for this block (huge_page_aligned only).
  bool huge_pages_advised() const noexcept { return huge_pages_advised_; }

  std::span<std::byte> bytes() noexcept { return {data_, size_}; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

  // The block seen as an array of T. Throws InvalidArgument when the size is not a multiple of
  // sizeof(T) or the alignment is below alignof(T).
  template <class T>
  std::span<T> as() {
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<T*>(data_), size_ / sizeof(T)};
  }
  template <class T>
  std::span<const T> as() const {
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }

 private:
  enum class Source : unsigned char { None, Heap, Mapping };

  void check_view(std::size_t element_size, std::size_t element_alignment) const;
  void release() noexcept;

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t alignment_ = 0;
  std::size_t mapped_bytes_ = 0;
  Source source_ = Source::None;
  bool huge_pages_advised_ = false;
};

}  // namespace brick
