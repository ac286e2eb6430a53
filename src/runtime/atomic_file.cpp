#include "brick/runtime/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/std.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "brick/core/error.hpp"
#include "runtime/os_error.hpp"

namespace brick {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  if (target_.empty()) throw InvalidArgument("AtomicFile: the path to write is empty");
  struct stat status {};
  if (stat(target_.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    throw IoError(fmt::format("cannot write {}: it is a directory", target_));
  }
  std::random_device entropy;
  for (int attempt = 0; attempt < 16; ++attempt) {
    temporary_ = target_;
    temporary_ += fmt::format(".tmp-{:08x}", entropy());
    fd_ = open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0) return;
    if (errno != EEXIST) break;
  }
  const int error = errno;
  throw IoError(fmt::format("cannot create a temporary file beside {}: {}", target_,
                            detail::errno_text(error)));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(temporary_.c_str());
  }
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) throw StateError(fmt::format("writing {} after it was committed", target_));
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int error = written < 0 ? errno : ENOSPC;
      throw IoError(fmt::format("cannot write {}: {}", target_, detail::errno_text(error)));
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw StateError(fmt::format("{} was already committed", target_));
  const auto fail = [this](const char* what) {
    const int error = errno;
    close(fd_);
    fd_ = -1;
    unlink(temporary_.c_str());
    throw IoError(fmt::format("cannot {} {}: {}", what, target_, detail::errno_text(error)));
  };
  if (fsync(fd_) != 0) fail("flush");
  if (close(fd_) != 0) {
    fd_ = -1;
    errno = errno ? errno : EIO;
    unlink(temporary_.c_str());
    throw IoError(fmt::format("cannot close {}: {}", target_, detail::errno_text(errno)));
  }
  fd_ = -1;
  if (rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    unlink(temporary_.c_str());
    throw IoError(
        fmt::format("cannot rename the temporary over {}: {}", target_, detail::errno_text(error)));
  }
  // The rename is durable once the folder's entry is on disk. A folder that cannot be opened or
  // synced (some file systems refuse) leaves the new file in place all the same.
  const std::filesystem::path folder = target_.has_parent_path() ? target_.parent_path() : ".";
  const int folder_fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {
    fsync(folder_fd);
    close(folder_fd);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

}  // namespace brick
