#include "profile/utf8.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick::detail {
namespace {

bool continuation(unsigned char byte) noexcept { return (byte & 0xC0) == 0x80; }

// The length of the well-formed sequence at the start of `rest`, or 0.
std::size_t sequence_length(std::string_view rest) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(rest[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong forms
    if (lead == 0xED) second_max = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // no overlong forms
    if (lead == 0xF4) second_max = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (rest.size() < length || byte(1) < second_min || byte(1) > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (!continuation(byte(i))) return 0;
  }
  return length;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text.substr(i));
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

void require_utf8(std::string_view text, std::string_view what) {
  if (const auto bad = first_invalid_utf8(text)) {
    throw InvalidArgument(fmt::format("{} is not valid UTF-8: byte {} is {:#04x}", what, *bad,
                                      static_cast<unsigned char>(text[*bad])));
  }
}

}  // namespace brick::detail
