#include "brick/trace/trace_name.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "brick/core/error.hpp"

namespace brick::trace {

TraceName::TraceName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTraceNameLength) {
    throw InvalidArgument(fmt::format("trace name of {} characters; expected 1 to {}", name.size(), kMaxTraceNameLength));
  }
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!printable) {
    throw InvalidArgument("trace name with a character that is not printable ASCII, or a quote or backslash");
  }
  std::copy(name.begin(), name.end(), chars_.begin());
  size_ = name.size();
}

}  // namespace brick::trace
