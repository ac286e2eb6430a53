#include "gguf/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/std.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "brick/core/error.hpp"
#include "runtime/os_error.hpp"

namespace brick::gguf::detail {
namespace {

// Tried names per AtomicFile before giving up: another writer racing for the same names is rare.
constexpr int kNameAttempts = 64;

std::filesystem::path folder_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

[[noreturn]] void throw_errno(std::string_view what, const std::filesystem::path& path, int error) {
  throw IoError(fmt::format("{} {}: {}", what, path, brick::detail::errno_text(error)));
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path folder = folder_of(target_);
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    temporary_ =
        folder / fmt::format(".{}.{}.{}.tmp", target_.filename().string(), getpid(), counter++);
    // 0666 before the umask: the file gets the permissions any newly created file would.
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    if (errno != EEXIST) throw_errno("cannot create a temporary file in", folder, errno);
  }
  throw IoError(fmt::format("cannot create a temporary file in {}: {} names were taken", folder,
                            kNameAttempts));
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      discard();
      throw_errno("cannot write", temporary_, error);
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) {
    const int error = errno;
    discard();
    throw_errno("cannot flush", temporary_, error);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary_.c_str());
    throw_errno("cannot close", temporary_, error);
  }
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary_.c_str());
    throw IoError(fmt::format("cannot rename {} to {}: {}", temporary_, target_,
                              brick::detail::errno_text(error)));
  }
  // The rename is durable once the folder's entry is on disk; a folder that cannot be opened or
  // synced (some file systems refuse) leaves the new file in place all the same.
  const int folder = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder >= 0) {
    ::fsync(folder);
    ::close(folder);
  }
}

}  // namespace brick::gguf::detail
