#pragma once
// A GGUF metadata value: one of the format's twelve scalar and string types, or an array of them
// (arrays of arrays included). The alternative index of Value::Storage and Array::Storage is the
// GGUF type id, so a value read from a file keeps the exact type it was written with.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace brick::gguf {

// enum gguf_type, as the file stores it (u32).
enum class ValueType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

inline constexpr std::uint32_t kValueTypeCount = 13;

// "u8", "i32", "f32", "bool", "str", "arr", ... (ggml's gguf_type_name spelling); "unknown" for an
// id GGUF does not define.
std::string_view name(ValueType type) noexcept;

// A GGUF bool: one byte, 0 or 1 (a distinct type, so that std::vector<Bool> is a plain array).
struct Bool {
  bool value = false;
  friend bool operator==(Bool, Bool) = default;
};

struct Array;

// An array of one element type; element_type() is the GGUF type of its elements.
struct Array {
  using Storage =
      std::variant<std::vector<std::uint8_t>, std::vector<std::int8_t>, std::vector<std::uint16_t>,
                   std::vector<std::int16_t>, std::vector<std::uint32_t>, std::vector<std::int32_t>,
                   std::vector<float>, std::vector<Bool>, std::vector<std::string>, std::vector<Array>,
                   std::vector<std::uint64_t>, std::vector<std::int64_t>, std::vector<double>>;
  Storage values;

  ValueType element_type() const noexcept { return static_cast<ValueType>(values.index()); }
  std::size_t size() const noexcept;
  friend bool operator==(const Array&, const Array&) = default;
};

class Value {
 public:
  using Storage = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
                               std::int32_t, float, Bool, std::string, Array, std::uint64_t, std::int64_t,
                               double>;

  Value() = default;
  template <class T>
    requires std::is_constructible_v<Storage, T&&>
  Value(T&& value) : storage_(std::forward<T>(value)) {}  // NOLINT: a value converts implicitly
  Value(const char* text) : storage_(std::string(text)) {}  // NOLINT
  Value(bool value) : storage_(Bool{value}) {}              // NOLINT

  ValueType type() const noexcept { return static_cast<ValueType>(storage_.index()); }
  const Storage& storage() const noexcept { return storage_; }

  // The value as T, or null when it holds another type.
  template <class T>
  const T* get_if() const noexcept {
    return std::get_if<T>(&storage_);
  }

  // A short human-readable rendering: scalars as written, strings quoted, arrays as their type and
  // length with the first `max_elements` elements.
  std::string to_string(std::size_t max_elements = 8) const;

  friend bool operator==(const Value&, const Value&) = default;

 private:
  Storage storage_;
};

}  // namespace brick::gguf
