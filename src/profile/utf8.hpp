#pragma once
// The profiler's names end up in JSON, Chrome trace and Prometheus exports, all of which must be
// valid UTF-8, so names are checked where they enter.
#include <cstddef>
#include <optional>
#include <string_view>

namespace brick::detail {

// The offset of the first byte that does not begin a well-formed UTF-8 sequence (Unicode's
// Table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or nullopt when `text` is
// valid UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

// Throws InvalidArgument naming `what` and the offending byte unless `text` is valid UTF-8.
void require_utf8(std::string_view text, std::string_view what);

}  // namespace brick::detail
