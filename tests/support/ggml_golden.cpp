#include "support/ggml_golden.hpp"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace brick::test {

namespace {

GoldenLines parse(const std::string& name) {
  const std::string path = std::string(BRICK_SOURCE_DIR) + "/tests/quant/data/" + name;
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open the golden vectors " + path);
  GoldenLines parsed;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::vector<std::string> values;
    for (std::string value; words >> value;) values.push_back(value);
    parsed.emplace(key, std::move(values));
  }
  return parsed;
}

}  // namespace

const GoldenLines& ggml_golden(const std::string& file) {
  static std::mutex mutex;
  static std::map<std::string, GoldenLines> files;
  const std::lock_guard lock(mutex);
  auto it = files.find(file);
  if (it == files.end()) it = files.emplace(file, parse(file)).first;
  return it->second;
}

const std::vector<std::string>& golden_field(const std::string& key, const std::string& file) {
  const GoldenLines& lines = ggml_golden(file);
  const auto it = lines.find(key);
  if (it == lines.end()) throw std::runtime_error(file + " has no line " + key);
  return it->second;
}

std::vector<unsigned char> golden_bytes(const std::string& key, const std::string& file) {
  const auto& values = golden_field(key, file);
  if (values.size() != 2) throw std::runtime_error(key + " is not a `key nbytes hex` line");
  const std::size_t count = std::stoul(values[0]);
  const std::string& hex = values[1];
  if (hex.size() != 2 * count) {
    throw std::runtime_error(key + " declares " + values[0] + " bytes but holds " +
                             std::to_string(hex.size() / 2));
  }
  std::vector<unsigned char> bytes(count);
  for (std::size_t i = 0; i < count; ++i) {
    bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return bytes;
}

}  // namespace brick::test
