#include "brick/gguf/value.hpp"

#include <fmt/format.h>

#include <array>
#include <iterator>
#include <string>
#include <type_traits>

namespace brick::gguf {
namespace {

constexpr std::array<std::string_view, kValueTypeCount> kNames = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};

// Quoted, with the bytes that would garble a terminal (quotes, backslashes, control bytes)
// escaped; other bytes, UTF-8 included, as they are.
void append_quoted(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  out += '"';
}

template <class T>
void append_element(std::string& out, const T& element, std::size_t max_elements) {
  if constexpr (std::is_same_v<T, std::string>) {
    append_quoted(out, element);
  } else if constexpr (std::is_same_v<T, Bool>) {
    out += element.value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, Array>) {
    // An array inside an array: its type and length, then its elements, as at the top.
    fmt::format_to(std::back_inserter(out), "{}[{}]", name(element.element_type()), element.size());
    std::visit(
        [&](const auto& values) {
          out += '{';
          for (std::size_t i = 0; i < values.size() && i < max_elements; ++i) {
            if (i != 0) out += ", ";
            append_element(out, values[i], max_elements);
          }
          if (values.size() > max_elements) out += max_elements == 0 ? "..." : ", ...";
          out += '}';
        },
        element.values);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", element);
  }
}

}  // namespace

std::string_view name(ValueType type) noexcept {
  const auto index = static_cast<std::size_t>(type);
  return index < kNames.size() ? kNames[index] : "unknown";
}

std::size_t Array::size() const noexcept {
  return std::visit([](const auto& elements) { return elements.size(); }, values);
}

std::string Value::to_string(std::size_t max_elements) const {
  std::string out;
  std::visit([&](const auto& value) { append_element(out, value, max_elements); }, storage_);
  return out;
}

}  // namespace brick::gguf
