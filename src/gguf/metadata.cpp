#include "brick/gguf/metadata.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick::gguf {

void Metadata::set(std::string key, Value value) {
  if (key.empty()) throw InvalidArgument("Metadata::set: a GGUF key cannot be empty");
  if (const std::size_t index = index_of(key); index != kNone) {
    entries_[index].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

bool Metadata::erase(std::string_view key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return false;
  const std::size_t index = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index));
  for (auto& [_, place] : index_) {
    if (place > index) --place;
  }
  return true;
}

const Value* Metadata::find_value(std::string_view key) const noexcept {
  const std::size_t index = index_of(key);
  return index == kNone ? nullptr : &entries_[index].second;
}

std::size_t Metadata::index_of(std::string_view key) const noexcept {
  const auto it = index_.find(key);
  return it == index_.end() ? kNone : it->second;
}

void Metadata::throw_missing(std::string_view key) {
  throw FormatError(fmt::format("GGUF metadata has no key '{}'", key));
}

void Metadata::throw_wrong_type(std::string_view key, const Value& value, ValueType wanted) {
  throw FormatError(fmt::format("GGUF key '{}' holds {} {}, not {}", key, name(value.type()),
                                value.to_string(4), name(wanted)));
}

void Metadata::throw_wrong_element_type(std::string_view key, const Array& array,
                                        ValueType wanted) {
  throw FormatError(fmt::format("GGUF key '{}' holds an array of {}, not of {}", key,
                                name(array.element_type()), name(wanted)));
}

}  // namespace brick::gguf
