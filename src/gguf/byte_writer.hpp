#pragma once
// Appends GGUF encodings to a byte buffer: little-endian numbers, strings (u64 length, bytes),
// metadata values and tensor infos, laid out as ggml's gguf_write_to_file lays them out.
#include <cstddef>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "brick/gguf/tensor_info.hpp"
#include "brick/gguf/value.hpp"

namespace brick::gguf::detail {

class ByteWriter {
 public:
  std::vector<std::byte>& bytes() noexcept { return bytes_; }

  template <class T>
  requires std::is_arithmetic_v<T>
  void number(T value) { raw(&value, sizeof value); }
  void raw(const void* data, std::size_t size);
  void string(std::string_view text);
  // The value's type id, then the value (arrays: element type, count, elements).
  void typed_value(const Value& value);
  void tensor_info(const TensorInfo& tensor);
  // Zero bytes up to the next multiple of `alignment`.
  void pad(std::size_t alignment);

 private:
  std::vector<std::byte> bytes_;
};

// How many arrays deep the value goes: 0 for a scalar, 1 for an array of scalars.
std::size_t nesting_depth(const Value& value) noexcept;

}  // namespace brick::gguf::detail
