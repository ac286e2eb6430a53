#pragma once
// The key-value metadata of a GGUF file, in file order, with typed look-ups that fail clearly:
//
//   const auto n_layer = metadata.get<std::uint32_t>("llama.block_count");   // FormatError if missing
//   const float* base = metadata.find<float>("llama.rope.freq_base");        // null if missing
//   std::span<const std::string> tokens = metadata.get_array<std::string>("tokenizer.ggml.tokens");
//
// Types are strict, as llama.cpp's loader is: a key stored as i32 is not read as u32.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brick/gguf/value.hpp"

namespace brick::gguf {

class Metadata {
 public:
  using Entry = std::pair<std::string, Value>;

  // Sets `key` to `value`: replaces the value of a key already present (keeping its place), else
  // appends. Throws InvalidArgument for an empty key.
  void set(std::string key, Value value);
  // Removes `key`; returns whether it was there.
  bool erase(std::string_view key);

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  bool contains(std::string_view key) const noexcept { return index_of(key) != kNone; }
  // In file (or insertion) order.
  std::span<const Entry> entries() const noexcept { return entries_; }

  // The value of `key`, or null.
  const Value* find_value(std::string_view key) const noexcept;

  // The value as T: null when the key is missing; FormatError naming the key, its type and the
  // type asked for when it holds another type.
  template <class T>
  const T* find(std::string_view key) const {
    const Value* value = find_value(key);
    if (value == nullptr) return nullptr;
    if (const T* typed = value->get_if<T>()) return typed;
    throw_wrong_type(key, *value, Value(T{}).type());
  }

  // The value as T; FormatError when the key is missing or holds another type.
  template <class T>
  const T& get(std::string_view key) const {
    if (const T* typed = find<T>(key)) return *typed;
    throw_missing(key);
  }

  // The elements of an array of T: empty when the key is missing (find_array) or FormatError
  // (get_array); FormatError when the key is not an array or its elements are not T.
  template <class T>
  std::span<const T> find_array(std::string_view key) const {
    const Array* array = find<Array>(key);
    if (array == nullptr) return {};
    if (const auto* values = std::get_if<std::vector<T>>(&array->values)) return *values;
    throw_wrong_element_type(key, *array, Value(T{}).type());
  }
  template <class T>
  std::span<const T> get_array(std::string_view key) const {
    if (!contains(key)) throw_missing(key);
    return find_array<T>(key);
  }

  friend bool operator==(const Metadata& a, const Metadata& b) { return a.entries_ == b.entries_; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t index_of(std::string_view key) const noexcept;
  [[noreturn]] static void throw_missing(std::string_view key);
  [[noreturn]] static void throw_wrong_type(std::string_view key, const Value& value, ValueType wanted);
  [[noreturn]] static void throw_wrong_element_type(std::string_view key, const Array& array, ValueType wanted);

  // Looks keys up by string_view without building a std::string.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
  };

  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t, KeyHash, std::equal_to<>> index_;  // key -> place in entries_
};

}  // namespace brick::gguf
