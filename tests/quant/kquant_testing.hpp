#pragma once
// Helpers shared by the k-quant tests: bytes as hex (readable failure messages), bit-level float
// comparison, and the golden file's FNV-1a.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace brick::test {

template <typename T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

inline std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) {
    hex.push_back(kDigits[std::to_integer<unsigned>(b) >> 4]);
    hex.push_back(kDigits[std::to_integer<unsigned>(b) & 0xF]);
  }
  return hex;
}

template <typename T>
std::string to_hex(const std::vector<T>& values) {
  return to_hex(std::as_bytes(std::span<const T>(values)));
}

// FNV-1a 64 as the golden file uses it: offset basis 1469598103934665603 (see data/README.md).
inline std::uint64_t golden_fnv1a64(std::span<const std::byte> bytes) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const std::byte b : bytes) {
    hash ^= std::to_integer<std::uint64_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// Index of the first float whose bits differ, or -1 when all are identical (so -0.0 != 0.0 and a
// NaN matches only the same NaN).
inline std::ptrdiff_t first_bit_difference(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

}  // namespace brick::test
