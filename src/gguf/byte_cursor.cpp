#include "gguf/byte_cursor.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick::gguf::detail {
namespace {

// ggml's own limit on a string's length (GGUF_MAX_STRING_LENGTH): longer ones are refused even
// when the file is big enough to hold them.
constexpr std::uint64_t kMaxStringBytes = std::uint64_t{1} << 30;

}  // namespace

std::span<const std::byte> ByteCursor::take(std::size_t count, std::string_view what) {
  if (count > remaining()) {
    fail_here(
        fmt::format("{} of {} bytes does not fit: the file ends at byte {}", what, count, size()));
  }
  const std::span<const std::byte> taken = bytes_.subspan(position_, count);
  position_ += count;
  return taken;
}

std::string_view ByteCursor::read_string() {
  const std::size_t start = position_;
  const auto length = read<std::uint64_t>();
  if (length > kMaxStringBytes) {
    fail(start,
         fmt::format("string length {} is over the limit of {} bytes", length, kMaxStringBytes));
  }
  if (length > remaining()) {
    fail(start,
         fmt::format("string of {} bytes does not fit: the file ends at byte {}", length, size()));
  }
  const std::span<const std::byte> text = take(static_cast<std::size_t>(length), "a string");
  return {reinterpret_cast<const char*>(text.data()), text.size()};
}

void ByteCursor::require_room(std::uint64_t count, std::size_t min_bytes,
                              std::string_view what) const {
  if (count > remaining() / min_bytes) {
    fail_here(fmt::format("{} {} need at least {} bytes each, but only {} bytes remain", count,
                          what, min_bytes, remaining()));
  }
}

void ByteCursor::fail(std::size_t offset, std::string_view problem) const {
  throw FormatError(fmt::format("{}: {} at byte {}: {}", file_name_, subject_, offset, problem));
}

}  // namespace brick::gguf::detail
