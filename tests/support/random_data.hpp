#pragma once
// Test inputs: seeded random data and the adversarial shapes every differential test runs over.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace brick::test {

// Lengths that hit every tail case of 8- and 16-wide SIMD loops.
inline const std::vector<std::size_t> kAwkwardLengths = {1, 7, 8, 15, 16, 17, 63, 64, 65, 1000, 4097};

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<float> normal(std::size_t n, std::uint64_t seed, float mean = 0.0f, float stddev = 1.0f);

// Named shapes: "zeros", "constant", "ramp", "outlier", "negative", "tiny" (denormal range),
// "huge", "uniform", "normal". Each is deterministic for a given (n, seed).
struct Pattern {
  std::string name;
  std::vector<float> values;
};
std::vector<Pattern> adversarial_patterns(std::size_t n, std::uint64_t seed);

}  // namespace brick::test
