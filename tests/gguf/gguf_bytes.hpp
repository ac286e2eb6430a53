#pragma once
// GGUF files built byte by byte, independently of GgufWriter, so the reader is tested against the
// format itself: valid files of any version and layout, and files broken in exactly one place.
// Each append returns the builder; size() before an append is the byte offset of what it adds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "brick/gguf/value.hpp"
#include "brick/quant/tensor_type.hpp"

namespace brick::gguf::test {

class GgufBytes {
 public:
  std::size_t size() const noexcept { return bytes_.size(); }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  std::vector<std::byte>& mutable_bytes() noexcept { return bytes_; }

  template <class T>
  requires std::is_arithmetic_v<T> GgufBytes& number(T value) {
    const auto* first = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), first, first + sizeof value);
    return *this;
  }
  GgufBytes& text(std::string_view raw) {
    const auto* first = reinterpret_cast<const std::byte*>(raw.data());
    bytes_.insert(bytes_.end(), first, first + raw.size());
    return *this;
  }
  GgufBytes& string(std::string_view s) { return number(std::uint64_t{s.size()}).text(s); }
  GgufBytes& type(ValueType type) { return number(static_cast<std::uint32_t>(type)); }

  // "GGUF", the version, the tensor count and the key-value count.
  GgufBytes& header(std::uint32_t version, std::uint64_t tensors, std::uint64_t key_values) {
    return text("GGUF").number(version).number(tensors).number(key_values);
  }
  // A key with a scalar value: the key, the value type, the value's bytes.
  template <class T>
  GgufBytes& key_value(std::string_view key, ValueType value_type, T value) {
    return string(key).type(value_type).number(value);
  }
  GgufBytes& key_string(std::string_view key, std::string_view value) {
    return string(key).type(ValueType::String).string(value);
  }
  // A tensor info: name, n_dims, ne[], ggml type, offset.
  GgufBytes& tensor_info(std::string_view name, std::span<const std::uint64_t> ne,
                         quant::TensorType type, std::uint64_t offset) {
    string(name).number(static_cast<std::uint32_t>(ne.size()));
    for (const std::uint64_t n : ne) number(n);
    return number(static_cast<std::uint32_t>(type)).number(offset);
  }
  GgufBytes& tensor_info(std::string_view name, std::initializer_list<std::uint64_t> ne,
                         quant::TensorType type, std::uint64_t offset) {
    return tensor_info(name, std::span<const std::uint64_t>(ne.begin(), ne.size()), type, offset);
  }
  GgufBytes& pad(std::size_t alignment) {
    bytes_.resize((bytes_.size() + alignment - 1) / alignment * alignment, std::byte{0});
    return *this;
  }
  GgufBytes& fill(std::size_t count, std::byte value) {
    bytes_.insert(bytes_.end(), count, value);
    return *this;
  }

  // Overwrites bytes at `offset` with the value's (for breaking a valid file in one place).
  template <class T>
  requires std::is_arithmetic_v<T> GgufBytes& patch(std::size_t offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof value);
    return *this;
  }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace brick::gguf::test
