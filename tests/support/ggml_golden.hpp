#pragma once
// The golden vectors produced from ggml's public API and kept in tests/quant/data/ (see the README
// there): lines of `key value...`, where `*_hex` lines are `key nbytes hex` of little-endian block
// bytes. They let tests check ggml compatibility without the oracle installed.
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace brick::test {

using GoldenLines = std::map<std::string, std::vector<std::string>>;

// Parsed once; throws std::runtime_error naming the path when the file cannot be read.
const GoldenLines& ggml_golden();

// The values of one line; throws std::runtime_error when the file has no such key.
const std::vector<std::string>& golden_field(const std::string& key);

// The bytes of a `key nbytes hex` line (the byte count checked against the hex).
std::vector<unsigned char> golden_bytes(const std::string& key);

template <class Block>
std::vector<Block> golden_blocks(const std::string& key) {
  const std::vector<unsigned char> bytes = golden_bytes(key);
  std::vector<Block> blocks(bytes.size() / sizeof(Block));
  std::memcpy(blocks.data(), bytes.data(), blocks.size() * sizeof(Block));
  return blocks;
}

}  // namespace brick::test
