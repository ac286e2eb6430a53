#include "gguf/value_reader.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "brick/gguf/gguf_file.hpp"
#include "gguf/value_types.hpp"

namespace brick::gguf::detail {
namespace {

// ggml's limit on the elements of one array (GGUF_MAX_ARRAY_ELEMENTS).
constexpr std::uint64_t kMaxArrayElements = std::uint64_t{1} << 30;

Bool read_bool(ByteCursor& in) {
  const std::size_t offset = in.position();
  const auto byte = in.read<std::uint8_t>();
  if (byte > 1) in.fail(offset, fmt::format("bool byte is {}, not 0 or 1", byte));
  return Bool{byte == 1};
}

Array read_array(ByteCursor& in, std::size_t depth);

// One value of type T, `depth` arrays deep.
template <class T>
T read_one(ByteCursor& in, std::size_t depth) {
  if constexpr (std::is_same_v<T, Bool>) {
    return read_bool(in);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::string(in.read_string());
  } else if constexpr (std::is_same_v<T, Array>) {
    return read_array(in, depth);
  } else {
    return in.read<T>();
  }
}

Array read_array(ByteCursor& in, std::size_t depth) {
  const std::size_t start = in.position();
  if (depth >= kMaxNesting) {
    in.fail(start, fmt::format("arrays are nested more than {} deep", kMaxNesting));
  }
  const ValueType element_type = read_value_type(in);
  const auto count = in.read<std::uint64_t>();
  if (count > kMaxArrayElements) {
    in.fail(start,
            fmt::format("array of {} elements is over the limit of {}", count, kMaxArrayElements));
  }
  in.require_room(count, min_encoded_bytes(element_type),
                  fmt::format("{} elements", name(element_type)));
  return with_value_type(element_type, [&]<class T>(std::type_identity<T>) {
    std::vector<T> values;
    if constexpr (std::is_arithmetic_v<T>) {
      values.resize(static_cast<std::size_t>(count));
      in.read_into(std::span<T>(values));
    } else {
      values.reserve(static_cast<std::size_t>(count));
      for (std::uint64_t i = 0; i < count; ++i) values.push_back(read_one<T>(in, depth + 1));
    }
    return Array{std::move(values)};
  });
}

}  // namespace

ValueType read_value_type(ByteCursor& in) {
  const std::size_t offset = in.position();
  const auto id = in.read<std::uint32_t>();
  if (id >= kValueTypeCount) in.fail(offset, fmt::format("unknown value type {}", id));
  return static_cast<ValueType>(id);
}

Value read_value(ByteCursor& in, ValueType type) {
  return with_value_type(type,
                         [&]<class T>(std::type_identity<T>) { return Value(read_one<T>(in, 0)); });
}

}  // namespace brick::gguf::detail
