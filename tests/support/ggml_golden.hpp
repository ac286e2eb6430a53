#pragma once
// The golden vectors produced from ggml's public API and kept in tests/quant/data/ (see the README
// there): lines of `key value...`, where `*_hex` lines are `key nbytes hex` of little-endian block
// bytes. They let tests check ggml compatibility without the oracle installed. Each function reads
// `file` in that folder: kquant-vectors.txt (Q5_K, Q6_K) by default, or weight-type-vectors.txt
// (Q4_K, Q8_0, F16, BF16).
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace brick::test {

using GoldenLines = std::map<std::string, std::vector<std::string>>;

inline constexpr const char* kKQuantGolden = "kquant-vectors.txt";
inline constexpr const char* kWeightTypeGolden = "weight-type-vectors.txt";

// Parsed once per file; throws std::runtime_error naming the path when the file cannot be read.
const GoldenLines& ggml_golden(const std::string& file = kKQuantGolden);

// The values of one line; throws std::runtime_error when the file has no such key.
const std::vector<std::string>& golden_field(const std::string& key, const std::string& file = kKQuantGolden);

// The bytes of a `key nbytes hex` line (the byte count checked against the hex).
std::vector<unsigned char> golden_bytes(const std::string& key, const std::string& file = kKQuantGolden);

template <class Block>
std::vector<Block> golden_blocks(const std::string& key, const std::string& file = kKQuantGolden) {
  const std::vector<unsigned char> bytes = golden_bytes(key, file);
  std::vector<Block> blocks(bytes.size() / sizeof(Block));
  std::memcpy(blocks.data(), bytes.data(), blocks.size() * sizeof(Block));
  return blocks;
}

}  // namespace brick::test
