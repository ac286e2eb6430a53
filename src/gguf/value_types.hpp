#pragma once
// What the reader needs to know about each GGUF value type: the C++ type that holds it (the
// alternative of Value::Storage whose index is the type id) and the fewest bytes one value takes in
// a file, which bounds how many values a count read from a file can honestly claim.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>

#include "brick/gguf/value.hpp"

namespace brick::gguf::detail {

// Bytes of the smallest encoding of one value of this type: a string is at least its u64 length,
// an array at least its u32 element type and u64 count.
constexpr std::size_t min_encoded_bytes(ValueType type) noexcept {
  switch (type) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::Bool:
      return 1;
    case ValueType::U16:
    case ValueType::I16:
      return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
      return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
    case ValueType::String:
      return 8;
    case ValueType::Array:
      return 12;
  }
  return 1;
}

template <class F, std::size_t index>
decltype(auto) call_with_alternative(F& f) {
  return f(std::type_identity<std::variant_alternative_t<index, Value::Storage>>{});
}

// Calls f(std::type_identity<T>{}) with T the C++ type of `type`, which must be a valid ValueType;
// f must return the same type for every T.
template <class F>
decltype(auto) with_value_type(ValueType type, F&& f) {
  return [&]<std::size_t... index>(std::index_sequence<index...>)->decltype(auto) {
    constexpr decltype(&call_with_alternative<F, 0>) kCalls[] = {
        &call_with_alternative<F, index>...};
    return kCalls[static_cast<std::size_t>(type)](f);
  }
  (std::make_index_sequence<kValueTypeCount>{});
}

}  // namespace brick::gguf::detail
