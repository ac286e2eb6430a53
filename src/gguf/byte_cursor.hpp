#pragma once
// A read position in the bytes of a GGUF file that never trusts them: every read checks that the
// bytes are there first, and every failure is a FormatError saying which file, what was being read
// (the subject: "header", "key 'general.name'", "tensor 'output.weight'") and at which byte.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace brick::gguf::detail {

// GGUF stores numbers little-endian; Brick reads them on x86-64 with plain copies.
static_assert(std::endian::native == std::endian::little,
              "the GGUF reader assumes a little-endian host");

class ByteCursor {
 public:
  ByteCursor(std::span<const std::byte> bytes, std::string_view file_name) noexcept
      : bytes_(bytes), file_name_(file_name) {}

  std::size_t position() const noexcept { return position_; }
  std::size_t remaining() const noexcept { return bytes_.size() - position_; }
  std::size_t size() const noexcept { return bytes_.size(); }

  // What the next reads belong to, for error messages.
  void set_subject(std::string subject) { subject_ = std::move(subject); }

  template <class T>
  requires std::is_arithmetic_v<T> T read() {
    T value;
    std::memcpy(&value, take(sizeof(T), "a number").data(), sizeof(T));
    return value;
  }

  // `count` values of T into `out`, after checking the bytes are there.
  template <class T>
  requires std::is_arithmetic_v<T>
  void read_into(std::span<T> out) {
    if (!out.empty())
      std::memcpy(out.data(), take(out.size_bytes(), "an array").data(), out.size_bytes());
  }

  // A GGUF string: u64 length, then that many bytes (no terminator).
  std::string_view read_string();

  // `count` bytes as a view into the file.
  std::span<const std::byte> take(std::size_t count, std::string_view what);

  // Throws unless the rest of the file can hold `count` items of at least `min_bytes` each: called
  // before anything is allocated for a count read from the file.
  void require_room(std::uint64_t count, std::size_t min_bytes, std::string_view what) const;

  // FormatError "<file>: <subject> at byte <offset>: <problem>".
  [[noreturn]] void fail(std::size_t offset, std::string_view problem) const;
  [[noreturn]] void fail_here(std::string_view problem) const { fail(position_, problem); }

 private:
  std::span<const std::byte> bytes_;
  std::string_view file_name_;
  std::string subject_ = "header";
  std::size_t position_ = 0;
};

}  // namespace brick::gguf::detail
