#pragma once
// RegularFile: the one way Brick reads a file it did not map. The file is opened without blocking
// (O_NONBLOCK, so a FIFO with no writer cannot hang the caller) and refused unless it is a regular
// file: a FIFO, a directory, a device or a socket is an IoError at construction. Bytes are copied
// out with pread, so a file that another process truncates or rewrites while it is read gives a
// short read, reported as an IoError, and never the SIGBUS that touching a mapping past the new end
// of the file raises.
//
// Thread-safe for concurrent read_at() calls (pread has no shared file offset).
#include <cstddef>
#include <filesystem>
#include <span>

namespace brick {

class RegularFile {
 public:
  // Throws IoError (path and errno text, or the kind of file it is) when `path` cannot be opened or
  // is not a regular file.
  explicit RegularFile(const std::filesystem::path& path);
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  const std::filesystem::path& path() const noexcept { return path_; }
  // The size when the file was opened.
  std::size_t size() const noexcept { return size_; }

  // Fills `out` with the bytes at [offset, offset + out.size()). Throws InvalidArgument when that
  // range is not inside size(), and IoError (path, offset, errno text) when the read fails or the
  // file ends sooner because it has shrunk since it was opened.
  void read_at(std::size_t offset, std::span<std::byte> out) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::size_t size_ = 0;
};

}  // namespace brick
