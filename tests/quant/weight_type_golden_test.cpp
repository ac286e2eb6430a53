// Golden vectors of the Q4_K, Q8_0, F16 and BF16 weight types, written from ggml's public API by
// brick_golden_vectors (tests/quant/data/README.md): with no ggml library present, Brick must
// reproduce the weight bytes ggml_quantize_chunk wrote, the activation bytes ggml-cpu's from_float
// made on every backend, the dequantized floats, and ggml's vec_dot within summation-order distance
// on every kernel of the table this CPU runs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "brick/quant/quantize.hpp"
#include "brick/quant/tensor_type.hpp"
#include "quant/dot_formats_testing.hpp"
#include "quant/kquant_testing.hpp"
#include "support/ggml_golden.hpp"
#include "support/golden_inputs.hpp"

namespace brick::test {
namespace {

struct WeightTypeCase {
  std::string key;   // "q8_0.n512", "nan.f16.n256"
  std::string edge;  // "" for the cosine rows
  quant::TensorType type;
  std::size_t n;
  friend void PrintTo(const WeightTypeCase& c, std::ostream* os) { *os << c.key; }
};

std::vector<WeightTypeCase> golden_cases() {
  std::vector<WeightTypeCase> cases;
  for (const auto& [line, values] : ggml_golden(kWeightTypeGolden)) {
    const std::string suffix = ".fnv1a64_quant";
    if (!line.ends_with(suffix)) continue;
    const std::string key = line.substr(0, line.size() - suffix.size());
    const std::size_t n_at = key.rfind(".n");
    const std::string head = key.substr(0, n_at);
    const std::size_t dot = head.find('.');
    const std::string edge = dot == std::string::npos ? "" : head.substr(0, dot);
    const std::string type = dot == std::string::npos ? head : head.substr(dot + 1);
    cases.push_back({key, edge, *quant::parse_tensor_type(type), std::stoul(key.substr(n_at + 2))});
  }
  return cases;
}

std::uint64_t golden_hash(const std::string& key) {
  return std::stoull(golden_field(key, kWeightTypeGolden).at(0), nullptr, 16);
}

class WeightTypeGolden : public ::testing::TestWithParam<WeightTypeCase> {};

TEST_P(WeightTypeGolden, MatchesGgmlsBytesValuesAndDots) {
  const WeightTypeCase& c = GetParam();
  const std::vector<float> x = c.edge.empty() ? golden_cosine_row(c.n, 0.0f) : golden_edge_row(c.edge);
  const std::vector<float> y = golden_cosine_row(c.n, 1.0f);
  const bool short_row = ggml_golden(kWeightTypeGolden).contains(c.key + ".quant_hex");

  std::vector<std::byte> quant(*quant::row_bytes(c.type, c.n));
  quant::quantize(c.type, x, c.n, quant);
  EXPECT_EQ(golden_fnv1a64(quant), golden_hash(c.key + ".fnv1a64_quant"));
  if (short_row) {
    EXPECT_EQ(to_hex(quant), golden_field(c.key + ".quant_hex", kWeightTypeGolden).at(1));
  }

  std::vector<float> deq(c.n);
  quant::dequantize(c.type, quant, deq);
  EXPECT_EQ(golden_fnv1a64(std::as_bytes(std::span<const float>(deq))), golden_hash(c.key + ".fnv1a64_deq"));

  ASSERT_TRUE(quant::detail::with_format(c.type, [&](auto format) {
    using Format = decltype(format);
    using Testing = FormatTesting<Format>;
    const std::size_t blocks = c.n / Format::kValues;
    std::vector<typename Format::Weight> w(blocks);
    std::memcpy(w.data(), quant.data(), quant.size());
    const double ggml_dot = std::strtod(golden_field(c.key + ".vec_dot_cpu", kWeightTypeGolden).at(0).c_str(), nullptr);
    for (const Backend backend : kConcreteBackends) {
      if (!is_supported(backend)) continue;
      // The activation as the mat-vec converts it on this backend.
      const auto xa = [&] {
        if constexpr (Format::kActivation == quant::detail::ActivationType::Q8K) {
          std::vector<quant::BlockQ8K> a(blocks);
          quant::quantize_q8k(y, a, backend);
          return a;
        } else if constexpr (Format::kActivation == quant::detail::ActivationType::Q8_0) {
          std::vector<quant::BlockQ80> a(blocks);
          quant::quantize_q8_0_activation(y, a, backend);
          return a;
        } else if constexpr (Format::kActivation == quant::detail::ActivationType::F16) {
          std::vector<quant::fp16_t> a(blocks);
          quant::fp32_to_fp16_activation(y, a, backend);
          return a;
        } else {
          std::vector<quant::bf16_t> a(blocks);
          quant::fp32_to_bf16_row(y, a, backend);
          return a;
        }
      }();
      const auto act = std::as_bytes(std::span(xa));
      EXPECT_EQ(golden_fnv1a64(act), golden_hash(c.key + ".fnv1a64_act")) << name(backend);
      if (short_row) {
        EXPECT_EQ(to_hex(act), golden_field(c.key + ".act_hex", kWeightTypeGolden).at(1)) << name(backend);
      }
    }
    const auto x_blocks = Testing::activations_from(y);
    const ExactDot exact = Testing::exact(w, x_blocks);
    for (const auto& kernel : quant::detail::kDotKernels<Format>) {
      if (!quant::detail::is_supported(kernel.isa)) continue;
      const float ours = kernel.row(w.data(), x_blocks.data(), blocks);
      if (std::isfinite(exact.magnitude) && exact.magnitude > std::numeric_limits<float>::max()) {
        // Finite terms whose sum leaves the float range: float sums overflow in an order-dependent
        // way (ggml's gives NaN where the scalar reference's double sum is finite), so no result is
        // more right than another.
        continue;
      }
      if (std::isnan(ggml_dot)) {
        EXPECT_TRUE(std::isnan(ours)) << kernel.name << ": " << ours;
      } else if (std::isinf(ggml_dot)) {
        EXPECT_EQ(ours, ggml_dot) << kernel.name;
      } else {
        EXPECT_NEAR(ours, ggml_dot, std::max(1e-5, Testing::tolerance(blocks)) * exact.magnitude + exact.flushable + 1e-6)
            << kernel.name;
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(GgmlGolden, WeightTypeGolden, ::testing::ValuesIn(golden_cases()), [](const auto& info) {
  std::string name = info.param.key;
  for (char& ch : name) {
    if (ch == '.') ch = '_';
  }
  return name;
});

// Every weight type and input of the generator is in the file (a missing line cannot go unchecked).
TEST(WeightTypeGoldenFile, HoldsEveryTypeAndInput) {
  EXPECT_EQ(golden_cases().size(), 4u * (3 + 8));
}

}  // namespace
}  // namespace brick::test
