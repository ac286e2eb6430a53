// Brick's dot products, every kernel of the table this CPU runs and the public entry point, against
// ggml on rows of many shapes, scales and patterns. Results may differ only by float summation
// order:
// - within 1e-6 of ggml's generic (portable C) vec_dot and of the exact dot of the rows, relative
//   to the result or, when terms cancel, to the sum of their magnitudes (for float rows, within the
//   format's float summation tolerance instead);
// - within 1e-5 of ggml's dispatched SIMD vec_dot, which itself strays up to ~5e-6 from its generic
//   one and from the exact value on rows with one dominant block (Q6_K "outlier" rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/dot_formats_testing.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::kBlockSize;

constexpr double kTolerance = 1e-6;
constexpr double kSimdTolerance = 1e-5;

struct RowPair {
  std::string name;
  std::vector<float> w;
  std::vector<float> x;
};

std::vector<RowPair> row_pairs() {
  std::vector<RowPair> pairs;
  std::uint64_t seed = 100;
  for (const std::size_t n : {256u, 512u, 1024u, 4096u, 14336u, 16384u}) {
    for (const float scale : {1e-3f, 0.02f, 1.0f, 50.0f}) {
      pairs.push_back({"normal/n" + std::to_string(n) + "/scale" + std::to_string(scale),
                       normal(n, seed++, 0.0f, scale), normal(n, seed++, 0.0f, 1.0f)});
    }
    pairs.push_back(
        {"uniform/n" + std::to_string(n), uniform(n, seed++), uniform(n, seed++, -3.0f, 3.0f)});
    const auto w_patterns = adversarial_patterns(n, seed++);
    const auto x_patterns = adversarial_patterns(n, seed++);
    for (std::size_t i = 0; i < w_patterns.size(); ++i) {
      // Each weight pattern against a normal activation and against the next activation pattern.
      pairs.push_back({w_patterns[i].name + "/normal/n" + std::to_string(n), w_patterns[i].values,
                       normal(n, seed++)});
      const auto& x_pattern = x_patterns[(i + 1) % x_patterns.size()];
      pairs.push_back({w_patterns[i].name + "/" + x_pattern.name + "/n" + std::to_string(n),
                       w_patterns[i].values, x_pattern.values});
    }
  }
  for (int r = 0; r < 400; ++r) {  // many short rows
    pairs.push_back({"short/" + std::to_string(r), normal(kBlockSize, seed++, 0.0f, 0.05f),
                     normal(kBlockSize, seed++, 0.0f, 2.0f)});
  }
  return pairs;
}

// Within `tolerance` of |expected| or of the terms' magnitude, plus `slack` (what a kernel that
// flushes subnormals to zero may drop).
::testing::AssertionResult close(double ours, double expected, double magnitude, double tolerance,
                                 double slack = 0.0) {
  if (!std::isfinite(expected) || !std::isfinite(ours)) {
    if ((std::isnan(expected) && std::isnan(ours)) || ours == expected) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << ours << " vs " << expected;
  }
  const double diff = std::fabs(ours - expected);
  if (diff <= tolerance * std::fabs(expected) || diff <= tolerance * magnitude + slack) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << ours << " vs " << expected << ": difference " << diff
                                       << " exceeds " << tolerance << " of both |expected| and the "
                                       << "terms' magnitude " << magnitude;
}

// ggml's dot products of each format: its dispatched SIMD one and, for the block formats, its
// portable C one.
template <auto kSimd>
struct GgmlSimdDot {
  static constexpr auto simd = kSimd;
};
template <auto kSimd, auto kGeneric>
struct GgmlDots : GgmlSimdDot<kSimd> {
  static constexpr auto generic = kGeneric;
};

template <class Format>
struct GgmlDot;
template <>
struct GgmlDot<quant::detail::F16Format> : GgmlSimdDot<&GgmlOracle::vec_dot_f16> {};
template <>
struct GgmlDot<quant::detail::BF16Format> : GgmlSimdDot<&GgmlOracle::vec_dot_bf16> {};
template <>
struct GgmlDot<quant::detail::Q80Format>
    : GgmlDots<&GgmlOracle::vec_dot_q8_0_q8_0, &GgmlOracle::vec_dot_q8_0_q8_0_generic> {};
template <>
struct GgmlDot<quant::detail::Q4KFormat> : GgmlDots<&GgmlOracle::vec_dot_q4k_q8k, &GgmlOracle::vec_dot_q4k_q8k_generic> {};
template <>
struct GgmlDot<quant::detail::Q5KFormat> : GgmlDots<&GgmlOracle::vec_dot_q5k_q8k, &GgmlOracle::vec_dot_q5k_q8k_generic> {};
template <>
struct GgmlDot<quant::detail::Q6KFormat> : GgmlDots<&GgmlOracle::vec_dot_q6k_q8k, &GgmlOracle::vec_dot_q6k_q8k_generic> {};

class DotOracle : public ::testing::Test {
 protected:
  void SetUp() override { oracle_ = &GgmlOracle::load(); }
  const GgmlOracle& oracle() const { return *oracle_; }

  // Every kernel of Format this CPU runs, and the public dot, on rows converted from floats as the
  // library converts them (weights as ggml_quantize_chunk writes them, x as ggml-cpu converts it).
  template <class Format>
  void check(float (*dot)(std::span<const typename Format::Weight>, std::span<const typename Format::Activation>,
                          Backend)) {
    using Testing = FormatTesting<Format>;
    int failures = 0;
    std::size_t compared = 0;
    for (const RowPair& pair : row_pairs()) {
      const auto w = Testing::weights_from(pair.w);
      const auto x = Testing::activations_from(pair.x);
      const std::size_t blocks = w.size();
      const ExactDot exact = Testing::exact(w, x);
      const double tolerance = std::max(kTolerance, Testing::tolerance(blocks));
      const float ggml = (oracle().*GgmlDot<Format>::simd)(w, x);
      float reference = ggml;
      if constexpr (requires { GgmlDot<Format>::generic; }) {
        reference = (oracle().*GgmlDot<Format>::generic)(w, x);
        EXPECT_TRUE(close(reference, exact.value, exact.magnitude, kTolerance)) << pair.name << ": ggml generic";
        EXPECT_TRUE(close(ggml, reference, exact.magnitude, kSimdTolerance)) << pair.name << ": ggml SIMD";
      } else {
        EXPECT_TRUE(close(ggml, exact.value, exact.magnitude, tolerance, exact.flushable)) << pair.name << ": ggml";
      }
      std::vector<std::pair<std::string, float>> ours = {{"public auto", dot(w, x, Backend::Auto)}};
      for (const auto& kernel : quant::detail::kDotKernels<Format>) {
        if (quant::detail::is_supported(kernel.isa)) ours.emplace_back(kernel.name, kernel.row(w.data(), x.data(), blocks));
      }
      for (const auto& [variant, value] : ours) {
        const auto vs_reference = close(value, reference, exact.magnitude, tolerance, exact.flushable);
        const auto vs_exact = close(value, exact.value, exact.magnitude, tolerance, exact.flushable);
        const auto vs_simd = close(value, ggml, exact.magnitude, std::max(kSimdTolerance, tolerance), exact.flushable);
        if (!vs_reference || !vs_exact || !vs_simd) {
          ADD_FAILURE() << pair.name << " on " << variant << ": vs ggml reference: " << vs_reference.message()
                        << "; vs exact: " << vs_exact.message() << "; vs ggml SIMD: " << vs_simd.message();
          if (++failures >= 10) return;
        }
        ++compared;
      }
    }
    EXPECT_GE(compared, 1000u);
  }

 private:
  const GgmlOracle* oracle_ = nullptr;
};

TEST_F(DotOracle, F16xF16MatchesGgmlOnEveryKernel) { check<quant::detail::F16Format>(quant::dot_f16_f16); }

TEST_F(DotOracle, BF16xBF16MatchesGgmlOnEveryKernel) { check<quant::detail::BF16Format>(quant::dot_bf16_bf16); }

TEST_F(DotOracle, Q8_0xQ8_0MatchesGgmlOnEveryKernel) { check<quant::detail::Q80Format>(quant::dot_q8_0_q8_0); }

TEST_F(DotOracle, Q4KxQ8KMatchesGgmlOnEveryKernel) { check<quant::detail::Q4KFormat>(quant::dot_q4k_q8k); }

TEST_F(DotOracle, Q5KxQ8KMatchesGgmlOnEveryKernel) { check<quant::detail::Q5KFormat>(quant::dot_q5k_q8k); }

TEST_F(DotOracle, Q6KxQ8KMatchesGgmlOnEveryKernel) { check<quant::detail::Q6KFormat>(quant::dot_q6k_q8k); }

}  // namespace
}  // namespace brick::test
