#pragma once
// Argument checks shared by the float ops' public functions: each throws InvalidArgument with a
// message that names the op, the offending argument and what was expected.
#include <cstddef>
#include <span>
#include <string_view>

namespace brick::ops::detail {

void require_same_size(std::string_view op, std::string_view name, std::size_t size,
                       std::string_view reference_name, std::size_t reference_size);

void require_not_empty(std::string_view op, std::string_view name, std::size_t size);

// `out` may be `in` itself (an in-place call) or lie apart from it, but must not partially
// overlap it: an element-wise kernel would read values it has already overwritten.
void require_same_or_disjoint(std::string_view op, std::string_view out_name,
                              std::span<const float> out, std::string_view in_name,
                              std::span<const float> in);

// `out` and `in` share no element.
void require_disjoint(std::string_view op, std::string_view out_name, std::span<const float> out,
                      std::string_view in_name, std::span<const float> in);

}  // namespace brick::ops::detail
