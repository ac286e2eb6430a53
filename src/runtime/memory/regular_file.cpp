#include "brick/runtime/memory/regular_file.hpp"

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <fmt/std.h>

#include "brick/core/error.hpp"
#include "runtime/memory/open_regular_file.hpp"
#include "runtime/os_error.hpp"

namespace brick {

RegularFile::RegularFile(const std::filesystem::path& path) : path_(path) {
  const detail::OpenedFile opened = detail::open_regular_file(path, "reading");
  fd_ = opened.fd;
  size_ = opened.size;
}

RegularFile::~RegularFile() { close(fd_); }

void RegularFile::read_at(std::size_t offset, std::span<std::byte> out) const {
  if (offset > size_ || out.size() > size_ - offset) {
    throw InvalidArgument(fmt::format("RegularFile::read_at: [{}, +{}) is outside {} ({} bytes)", offset,
                                      out.size(), path_, size_));
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      throw IoError(fmt::format("cannot read {} at byte {}: {}", path_, offset + done, detail::errno_text(error)));
    }
    if (got == 0) {
      throw IoError(fmt::format("cannot read {}: it ends at byte {}, but had {} bytes when it was opened (it was "
                                "truncated while being read)",
                                path_, offset + done, size_));
    }
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace brick
