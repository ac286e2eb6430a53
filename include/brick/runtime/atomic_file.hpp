#pragma once
// A file written whole or not at all. The bytes go to a new temporary file beside the target
// (created with O_CREAT | O_EXCL | O_NOFOLLOW under a random name, so nothing already there, a
// symlink included, is ever opened), and commit() flushes them to disk and renames the temporary
// over the target. Until then an existing target is untouched; an AtomicFile destroyed without a
// commit (an error, an exception, an interrupted writer) removes its temporary.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

namespace brick {

class AtomicFile {
 public:
  // IoError (path and errno text) when the temporary cannot be created, e.g. the folder is
  // missing or not writable, or `target` is a directory; InvalidArgument for an empty path.
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& target() const noexcept { return target_; }

  // Appends bytes; IoError on a failed or short write (a full disk).
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }

  // fsync, then rename over the target and fsync its folder; IoError when the flush or the rename
  // fails (the temporary is removed).
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
};

// Replaces `path` with `contents` atomically (see AtomicFile).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace brick
