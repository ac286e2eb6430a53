#include "runtime/memory/open_regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <fmt/std.h>

#include "brick/core/error.hpp"
#include "runtime/os_error.hpp"

namespace brick::detail {
namespace {

std::string_view kind_of(mode_t mode) noexcept {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

OpenedFile open_regular_file(const std::filesystem::path& path, std::string_view purpose) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw IoError(fmt::format("cannot open {} for {}: {}", path, purpose, errno_text(error)));
  }
  const auto fail = [&](const std::string& message) {
    close(fd);
    return IoError(message);
  };
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    const int error = errno;
    throw fail(fmt::format("cannot stat {}: {}", path, errno_text(error)));
  }
  if (!S_ISREG(status.st_mode)) {
    throw fail(fmt::format("cannot open {} for {}: it is {}, not a regular file", path, purpose,
                           kind_of(status.st_mode)));
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int error = errno;
    throw fail(fmt::format("cannot open {} for {}: {}", path, purpose, errno_text(error)));
  }
  return {fd, static_cast<std::size_t>(status.st_size)};
}

}  // namespace brick::detail
