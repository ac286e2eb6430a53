#include "graph/json_document.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <charconv>
#include <cmath>
#include <span>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/regular_file.hpp"

namespace brick::graph::detail {

nlohmann::json read_json_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const RegularFile file(path);
  if (file.size() > max_bytes) {
    throw CapacityError(fmt::format("{}: {} bytes; a file of this kind is at most {}", path, file.size(), max_bytes));
  }
  std::string text(file.size(), '\0');
  file.read_at(0, std::as_writable_bytes(std::span(text.data(), text.size())));
  return parse_json(text, path.string());
}

nlohmann::json parse_json(std::string_view text, std::string_view what) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) throw FormatError(fmt::format("{}: not a JSON document", what));
  return json;
}

JsonObject::JsonObject(const nlohmann::json& value, std::string path) : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) throw FormatError(fmt::format("{}: expected a JSON object", path_));
}

void JsonObject::fail(std::string_view key, std::string_view expected) const {
  throw FormatError(fmt::format("{}.{}: expected {}", path_, key, expected));
}

const nlohmann::json& JsonObject::field(std::string_view key) const {
  const auto it = value_.find(key);
  if (it == value_.end()) throw FormatError(fmt::format("{}: the field '{}' is missing", path_, key));
  return *it;
}

JsonObject JsonObject::object(std::string_view key) const {
  return JsonObject(field(key), fmt::format("{}.{}", path_, key));
}

const nlohmann::json& JsonObject::array(std::string_view key) const {
  const nlohmann::json& value = field(key);
  if (!value.is_array()) fail(key, "an array");
  return value;
}

JsonObject JsonObject::element(std::string_view key, std::size_t i) const {
  return JsonObject(array(key).at(i), fmt::format("{}.{}[{}]", path_, key, i));
}

std::string JsonObject::string(std::string_view key) const {
  const nlohmann::json& value = field(key);
  if (!value.is_string()) fail(key, "a string");
  return value.get<std::string>();
}

std::int64_t JsonObject::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const nlohmann::json& value = field(key);
  const auto wanted = fmt::format("a whole number from {} to {}", min, max);
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (max < 0 || v > static_cast<std::uint64_t>(max) || static_cast<std::int64_t>(v) < min) fail(key, wanted);
    return static_cast<std::int64_t>(v);
  }
  if (!value.is_number_integer()) fail(key, wanted);
  const auto v = value.get<std::int64_t>();
  if (v < min || v > max) fail(key, wanted);
  return v;
}

std::uint64_t JsonObject::unsigned_integer(std::string_view key, std::uint64_t max) const {
  const nlohmann::json& value = field(key);
  const auto wanted = fmt::format("a whole number from 0 to {}", max);
  if (!value.is_number_unsigned()) fail(key, wanted);
  const auto v = value.get<std::uint64_t>();
  if (v > max) fail(key, wanted);
  return v;
}

double JsonObject::number(std::string_view key) const {
  const nlohmann::json& value = field(key);
  if (!value.is_number() || !std::isfinite(value.get<double>())) fail(key, "a finite number");
  return value.get<double>();
}

std::uint64_t JsonObject::hash(std::string_view key) const {
  const std::string text = string(key);
  if (text.size() != 18 || !text.starts_with("0x")) fail(key, "a hash: 0x and 16 hex digits");
  std::uint64_t hash = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data() + 2, end, hash, 16);
  if (error != std::errc() || stop != end) fail(key, "a hash: 0x and 16 hex digits");
  return hash;
}

}  // namespace brick::graph::detail
