#pragma once
// MappedFile: a whole file mapped read-only (MAP_PRIVATE, PROT_READ), with access advice, owned by
// one object. The model loader reads weights straight out of the mapping.
//
// A mapping trusts the file to keep its size: touching a page past the end of a file that another
// process has since truncated raises SIGBUS. Files that may change while they are read (a KV cache
// another process saves over, say) are read through RegularFile (regular_file.hpp) instead.
#include <cstddef>
#include <filesystem>
#include <span>

#include "brick/runtime/memory/advice.hpp"

namespace brick {

class MappedFile {
 public:
  // Maps `path` and applies `advice` to the whole mapping. An empty file gives an empty mapping.
  // Throws IoError (path, size and errno text) when the file cannot be opened, is not a regular
  // file (a FIFO, a directory or a device is refused without blocking), or cannot be mapped;
  // InvalidArgument for an `advice` that is not an Advice value.
  explicit MappedFile(const std::filesystem::path& path, Advice advice = Advice::Normal);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::filesystem::path& path() const noexcept { return path_; }

  void advise(Advice advice) const;
  // Advice for [offset, offset + length); throws InvalidArgument when that leaves the file.
  void advise(std::size_t offset, std::size_t length, Advice advice) const;

 private:
  void release() noexcept;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace brick
