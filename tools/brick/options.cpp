// Option values several commands share.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "brick/core/error.hpp"
#include "brick/runtime/cpu_topology.hpp"
#include "commands.hpp"

namespace brick::cli {

model::FileType parse_file_type_option(const std::string& text) {
  if (const auto type = model::parse_file_type(text)) return *type;
  throw InvalidArgument(fmt::format(
      "unknown type '{}'; Brick writes q4_k_m, q5_k_m, q6_k, q8_0, f16, bf16 and f32", text));
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const auto wanted = fmt::format("a whole number from {} to {}", min, max);
        if (text.empty() || text.size() > 20 ||
            !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          return fmt::format("'{}' is not {}", text, wanted);
        }
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < min ||
            value > max) {
          return fmt::format("{} is not {}", text, wanted);
        }
        text = std::to_string(value);  // CLI11 would read a leading 0 as octal
        return {};
      },
      fmt::format("{}..{}", min, max));
}

CLI::Validator decimal_number(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const auto wanted = fmt::format("a number from {:g} to {:g}", min, max);
        const bool decimal = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
          return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
        });
        double value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (!decimal || error != std::errc() || end != text.data() + text.size() ||
            !std::isfinite(value) || value < min || value > max) {
          return fmt::format("'{}' is not {}", text, wanted);
        }
        return {};
      },
      fmt::format("{:g}..{:g}", min, max));
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

void require_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  if (std::filesystem::is_directory(p)) throw IoError(fmt::format("{} {}: is a directory", flag, path));
  const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : ".";
  if (access(folder.c_str(), W_OK) != 0) {
    throw IoError(fmt::format("{} {}: the folder {} is missing or not writable", flag, path, folder.string()));
  }
}

std::size_t thread_count(std::size_t requested) {
  if (requested == 0) return physical_cores();
  const std::size_t cpus = usable_cpus();
  if (requested > cpus) {
    fmt::print(stderr, "brick: {} threads asked for, {} CPUs usable: running {}\n", requested, cpus,
               cpus);
    return cpus;
  }
  return requested;
}

}  // namespace brick::cli
