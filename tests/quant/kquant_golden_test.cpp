// Golden vectors produced by ggml's public API (tests/quant/data/README.md): Brick must reproduce
// the quantized bytes, the Q8_K bytes and the dequantized values with no ggml library present.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "brick/quant/kquants.hpp"
#include "kquant_testing.hpp"
#include "support/ggml_golden.hpp"
#include "support/golden_inputs.hpp"

namespace brick::test {
namespace {

using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8K;
using quant::kBlockSize;

struct GoldenCase {
  std::string prefix;  // "", "zeros", "ramp", "outlier", "neg"
  std::string type;    // "q5_K" or "q6_K"
  std::size_t n;
  std::string key() const {
    return (prefix.empty() ? "" : prefix + ".") + type + ".n" + std::to_string(n);
  }
  friend void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.key(); }
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  for (const char* type : {"q5_K", "q6_K"}) {
    for (const std::size_t n : {256u, 512u, 4096u}) cases.push_back({"", type, n});
    for (const char* edge : {"zeros", "ramp", "outlier", "neg"}) cases.push_back({edge, type, 256});
  }
  return cases;
}

std::string hex_field(const std::string& key, std::size_t expected_bytes) {
  const auto& values = golden_field(key);
  EXPECT_EQ(values.size(), 2u) << key;
  EXPECT_EQ(std::stoul(values.at(0)), expected_bytes) << key;
  return values.at(1);
}

class KQuantGolden : public ::testing::TestWithParam<GoldenCase> {};

template <typename Block>
void check_case(const GoldenCase& c, void (*quantize)(std::span<const float>, std::span<Block>),
                void (*dequantize)(std::span<const Block>, std::span<float>)) {
  const std::string key = c.key();
  const std::vector<float> x = c.prefix.empty() ? golden_cosine_row(c.n, 0.0f) : golden_edge_row(c.prefix);
  const std::vector<float> y = golden_cosine_row(c.n, 1.0f);

  std::vector<Block> q(c.n / kBlockSize);
  quantize(x, q);
  const auto q_bytes = bytes_of(std::span<const Block>(q));
  EXPECT_EQ(golden_fnv1a64(q_bytes), std::stoull(golden_field(key + ".fnv1a64_quant").at(0), nullptr, 16))
      << key;
  if (ggml_golden().contains(key + ".quant_hex")) {
    EXPECT_EQ(to_hex(q_bytes), hex_field(key + ".quant_hex", q_bytes.size())) << key;
  }

  std::vector<BlockQ8K> y8(c.n / kBlockSize);
  quant::quantize_q8k(y, y8);
  const auto y8_bytes = bytes_of(std::span<const BlockQ8K>(y8));
  EXPECT_EQ(golden_fnv1a64(y8_bytes), std::stoull(golden_field(key + ".fnv1a64_q8K").at(0), nullptr, 16))
      << key;
  if (ggml_golden().contains(key + ".q8K_hex")) {
    EXPECT_EQ(to_hex(y8_bytes), hex_field(key + ".q8K_hex", y8_bytes.size())) << key;
  }

  std::vector<float> deq(c.n);
  dequantize(q, deq);
  const auto& first8 = golden_field(key + ".deq_first8");
  ASSERT_EQ(first8.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    // Printed with 9 significant digits, which round-trips a float exactly; "-0" keeps its sign.
    const float expected = std::strtof(first8[i].c_str(), nullptr);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(deq[i]), std::bit_cast<std::uint32_t>(expected))
        << key << " value " << i << ": " << deq[i] << " vs " << first8[i];
  }
}

TEST_P(KQuantGolden, MatchesGgmlBytesAndValues) {
  const GoldenCase& c = GetParam();
  if (c.type == "q5_K") {
    check_case<BlockQ5K>(c, quant::quantize_q5k, quant::dequantize_q5k);
  } else {
    check_case<BlockQ6K>(c, quant::quantize_q6k, quant::dequantize_q6k);
  }
}

INSTANTIATE_TEST_SUITE_P(GgmlGolden, KQuantGolden, ::testing::ValuesIn(golden_cases()),
                         [](const auto& info) {
                           std::string name = info.param.key();
                           for (char& ch : name) {
                             if (ch == '.') ch = '_';
                           }
                           return name;
                         });

// Every case the golden file holds is exercised above (a new generator line cannot go unchecked).
TEST(KQuantGolden, CoversEveryGoldenRow) {
  std::size_t covered = 0;
  for (const auto& c : golden_cases()) covered += ggml_golden().contains(c.key() + ".fnv1a64_quant");
  std::size_t in_file = 0;
  for (const auto& [key, values] : ggml_golden()) {
    in_file += key.ends_with(".fnv1a64_quant");
  }
  EXPECT_EQ(covered, in_file);
  EXPECT_EQ(covered, golden_cases().size());
}

}  // namespace
}  // namespace brick::test
