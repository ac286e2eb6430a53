#include "ops/validate.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "brick/core/error.hpp"

namespace brick::ops::detail {
namespace {

bool overlap(std::span<const float> a, std::span<const float> b) noexcept {
  if (a.empty() || b.empty()) return false;
  const auto a_begin = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b_begin = reinterpret_cast<std::uintptr_t>(b.data());
  return a_begin < b_begin + b.size_bytes() && b_begin < a_begin + a.size_bytes();
}

}  // namespace

void require_same_size(std::string_view op, std::string_view name, std::size_t size,
                       std::string_view reference_name, std::size_t reference_size) {
  if (size != reference_size) {
    throw InvalidArgument(fmt::format("{}: {} has {} elements but {} has {}; they must match", op,
                                      name, size, reference_name, reference_size));
  }
}

void require_not_empty(std::string_view op, std::string_view name, std::size_t size) {
  if (size == 0) throw InvalidArgument(fmt::format("{}: {} is empty", op, name));
}

void require_same_or_disjoint(std::string_view op, std::string_view out_name,
                              std::span<const float> out, std::string_view in_name,
                              std::span<const float> in) {
  const bool same = out.data() == in.data() && out.size() == in.size();
  if (!same && overlap(out, in)) {
    throw InvalidArgument(
        fmt::format("{}: {} partially overlaps {}; pass the same span to work in "
                    "place, or spans that do not overlap",
                    op, out_name, in_name));
  }
}

void require_disjoint(std::string_view op, std::string_view out_name, std::span<const float> out,
                      std::string_view in_name, std::span<const float> in) {
  if (overlap(out, in)) {
    throw InvalidArgument(fmt::format(
        "{}: {} overlaps {}; the output must not share memory with it", op, out_name, in_name));
  }
}

}  // namespace brick::ops::detail
