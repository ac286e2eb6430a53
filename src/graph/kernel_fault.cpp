#include "brick/graph/kernel_fault.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

template <class Int>
Int whole_number(std::string_view text, std::string_view what, std::string_view fault) {
  Int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    throw InvalidArgument(fmt::format("fault '{}': the {} '{}' is not a whole number >= 0", fault, what, text));
  }
  return value;
}

}  // namespace

KernelFault parse_kernel_fault(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (parts.size() != 3 && parts.size() != 4) {
    throw InvalidArgument(fmt::format("fault '{}': expected KERNEL,LAYER,TOKEN[,BACKEND]", text));
  }
  if (parts[0].empty()) throw InvalidArgument(fmt::format("fault '{}': the kernel name is empty", text));
  KernelFault fault;
  fault.kernel = std::string(parts[0]);
  fault.layer = whole_number<std::int32_t>(parts[1], "layer", text);
  fault.position = whole_number<std::int64_t>(parts[2], "token", text);
  if (parts.size() == 4) {
    const auto backend = parse_backend(parts[3]);
    if (!backend || *backend == Backend::Auto) {
      throw InvalidArgument(
          fmt::format("fault '{}': '{}' is not a backend (scalar, avx2 or avx512)", text, parts[3]));
    }
    fault.backend = *backend;
  }
  return fault;
}

}  // namespace brick::graph
