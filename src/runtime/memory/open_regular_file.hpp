#pragma once
// Opening a file to read it, as RegularFile and MappedFile both need it.
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace brick::detail {

struct OpenedFile {
  int fd = -1;
  std::size_t size = 0;
};

// Opens `path` read-only with O_NONBLOCK (a plain open of a FIFO waits for a writer) and O_NOCTTY,
// refuses anything fstat does not call a regular file, then clears O_NONBLOCK for the reads. Throws
// IoError naming the path, `purpose` ("reading", "mapping") and the errno text or the kind of file;
// the descriptor is closed on every error.
OpenedFile open_regular_file(const std::filesystem::path& path, std::string_view purpose);

}  // namespace brick::detail
