#pragma once
// The CLI fuzzer's input format, shared by the fuzzer and its seed program: the arguments after
// `brick`, one per line (a command line a shell could pass, less arguments holding newlines).
#include <cstddef>
#include <string>
#include <vector>

namespace brick::fuzz {

// At most this many arguments are taken from an input; the rest of it is ignored.
inline constexpr std::size_t kMaxArguments = 64;

inline std::vector<std::string> split_arguments(const char* data, std::size_t size) {
  std::vector<std::string> arguments;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= size && arguments.size() < kMaxArguments; ++i) {
    if (i == size || data[i] == '\n') {
      if (i > start || i < size) arguments.emplace_back(data + start, i - start);
      start = i + 1;
    }
  }
  return arguments;
}

inline std::string join_arguments(const std::vector<std::string>& arguments) {
  std::string text;
  for (std::size_t i = 0; i < arguments.size(); ++i) text += (i ? "\n" : "") + arguments[i];
  return text;
}

}  // namespace brick::fuzz
