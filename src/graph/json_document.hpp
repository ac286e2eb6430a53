#pragma once
// Reading the JSON files of the graph room (checksum files, graph exports, the cached machine
// peaks) without trusting them: the file is read whole through RegularFile up to a size bound,
// parsed without exceptions, and every field is read through a typed accessor that throws a
// FormatError naming the file and the field's path ("entries[3].summary.count") when the field is
// missing or holds another type or a value out of range.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace brick::graph::detail {

// The parsed document of `path`. IoError when it cannot be read, CapacityError past `max_bytes`,
// FormatError when it is not JSON.
nlohmann::json read_json_file(const std::filesystem::path& path, std::size_t max_bytes);
// The parsed `text`; FormatError naming `what` when it is not JSON.
nlohmann::json parse_json(std::string_view text, std::string_view what);

// One JSON object of a document, with the path that leads to it.
class JsonObject {
 public:
  // FormatError unless `value` is an object.
  JsonObject(const nlohmann::json& value, std::string path);

  const std::string& path() const noexcept { return path_; }
  bool has(std::string_view key) const { return value_.contains(key); }
  // Whether the field at `key` is null; FormatError when it is missing.
  bool is_null(std::string_view key) const { return field(key).is_null(); }

  JsonObject object(std::string_view key) const;
  // The array at `key`; FormatError unless it is one.
  const nlohmann::json& array(std::string_view key) const;
  // The i-th element of array(key) as an object.
  JsonObject element(std::string_view key, std::size_t i) const;
  std::string string(std::string_view key) const;
  // A whole number in [min, max].
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  std::uint64_t unsigned_integer(std::string_view key, std::uint64_t max = UINT64_MAX) const;
  // A finite number.
  double number(std::string_view key) const;
  // "0x" and 16 hex digits (hash_text's form).
  std::uint64_t hash(std::string_view key) const;

  // FormatError naming the field at `key`, saying what it should be.
  [[noreturn]] void fail(std::string_view key, std::string_view expected) const;

 private:
  const nlohmann::json& field(std::string_view key) const;

  const nlohmann::json& value_;
  std::string path_;
};

}  // namespace brick::graph::detail
