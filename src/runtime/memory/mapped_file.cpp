#include "brick/runtime/memory/mapped_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>
#include <fmt/std.h>

#include "brick/core/error.hpp"
#include "runtime/memory/open_regular_file.hpp"
#include "runtime/os_error.hpp"

namespace brick {
namespace {

// Closes the descriptor on every path out of the constructor; the mapping outlives it.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path, Advice advice) : path_(path) {
  const detail::OpenedFile opened = detail::open_regular_file(path, "mapping");
  const FileDescriptor file{opened.fd};
  const std::size_t size = opened.size;
  if (size == 0) return;
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    throw IoError(fmt::format("cannot map {} ({} bytes): {}", path, size, detail::errno_text(error)));
  }
  data_ = static_cast<const std::byte*>(p);
  size_ = size;
  if (advice != Advice::Normal) {
    try {
      this->advise(advice);
    } catch (...) {
      release();
      throw;
    }
  }
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::advise(Advice advice) const {
  if (size_ != 0) brick::advise(bytes(), advice);
}

void MappedFile::advise(std::size_t offset, std::size_t length, Advice advice) const {
  if (offset > size_ || length > size_ - offset) {
    throw InvalidArgument(fmt::format("MappedFile::advise: [{}, +{}) is outside {} ({} bytes)", offset,
                                      length, path_, size_));
  }
  brick::advise(bytes().subspan(offset, length), advice);
}

}  // namespace brick
