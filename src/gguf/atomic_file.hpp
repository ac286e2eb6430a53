#pragma once
// A file written in full or not at all: the bytes go to a new temporary file in the target's folder
// (created with O_CREAT | O_EXCL | O_NOFOLLOW, so it is never someone else's file or a link), which
// commit() flushes to disk and renames over the target. Until then the target is untouched; an
// AtomicFile destroyed without commit() (an error, an exception) removes its temporary.
#include <cstddef>
#include <filesystem>
#include <span>

namespace brick::gguf::detail {

class AtomicFile {
 public:
  // IoError (folder, errno text) when the temporary cannot be created.
  explicit AtomicFile(std::filesystem::path target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  const std::filesystem::path& temporary_path() const noexcept { return temporary_; }

  // Appends the bytes; IoError with errno text when the system refuses.
  void write(std::span<const std::byte> bytes);
  // fsync, close, rename over the target, fsync the folder. IoError when any step fails, and the
  // temporary is removed.
  void commit();

 private:
  void discard() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
};

}  // namespace brick::gguf::detail
