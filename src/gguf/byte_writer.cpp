#include "gguf/byte_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace brick::gguf::detail {
namespace {

std::size_t array_depth(const Array& array) noexcept {
  const auto* nested = std::get_if<std::vector<Array>>(&array.values);
  std::size_t deepest = 0;
  if (nested != nullptr) {
    for (const Array& element : *nested) deepest = std::max(deepest, array_depth(element));
  }
  return 1 + deepest;
}

template <class T>
void write_element(ByteWriter& out, const T& value) {
  if constexpr (std::is_same_v<T, Bool>) {
    out.number(std::uint8_t{value.value});
  } else if constexpr (std::is_same_v<T, std::string>) {
    out.string(value);
  } else if constexpr (std::is_same_v<T, Array>) {
    out.number(static_cast<std::uint32_t>(value.element_type()));
    out.number(std::uint64_t{value.size()});
    std::visit(
        [&]<class E>(const std::vector<E>& elements) {
          if constexpr (std::is_arithmetic_v<E>) {
            out.raw(elements.data(), elements.size() * sizeof(E));
          } else {
            for (const E& element : elements) write_element(out, element);
          }
        },
        value.values);
  } else {
    out.number(value);
  }
}

}  // namespace

void ByteWriter::raw(const void* data, std::size_t size) {
  const auto* first = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), first, first + size);
}

void ByteWriter::string(std::string_view text) {
  number(std::uint64_t{text.size()});
  raw(text.data(), text.size());
}

void ByteWriter::typed_value(const Value& value) {
  number(static_cast<std::uint32_t>(value.type()));
  std::visit([&](const auto& v) { write_element(*this, v); }, value.storage());
}

void ByteWriter::tensor_info(const TensorInfo& tensor) {
  string(tensor.name);
  number(tensor.n_dims);
  raw(tensor.ne.data(), tensor.n_dims * sizeof(std::uint64_t));
  number(static_cast<std::uint32_t>(tensor.type));
  number(tensor.offset);
}

void ByteWriter::pad(std::size_t alignment) {
  const std::size_t padded = (bytes_.size() + alignment - 1) / alignment * alignment;
  bytes_.resize(padded, std::byte{0});
}

std::size_t nesting_depth(const Value& value) noexcept {
  const Array* array = value.get_if<Array>();
  return array == nullptr ? 0 : array_depth(*array);
}

}  // namespace brick::gguf::detail
