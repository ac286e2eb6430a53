// Brick's Q5_K/Q6_K x Q8_K dot products, every kernel variant this CPU runs (scalar, AVX2, AVX-512,
// AVX-512 VNNI) and the public entry point, against ggml on rows of many shapes, scales and
// patterns. Results may differ only by float summation order:
// - within 1e-6 of ggml's generic (portable C) vec_dot and of the double-precision dot of the
//   dequantized rows, relative to the result or, when terms cancel, to the sum of their magnitudes;
// - within 1e-5 of ggml's dispatched SIMD vec_dot, which itself strays up to ~5e-6 from its generic
//   one and from the exact value on rows with one dominant block (Q6_K "outlier" rows).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/quant/dot_kernels.hpp"
#include "brick/quant/kquants.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8K;
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

// Sum of |w_i * x_i| and the double-precision dot of the dequantized rows.
struct Reference {
  double magnitude = 0.0;
  double exact = 0.0;
};

Reference reference(std::span<const float> w, std::span<const float> x) {
  Reference r;
  for (std::size_t i = 0; i < w.size(); ++i) {
    r.magnitude += std::fabs(double(w[i]) * x[i]);
    r.exact += double(w[i]) * x[i];
  }
  return r;
}

::testing::AssertionResult close(double ours, double expected, double magnitude, double tolerance) {
  if (!std::isfinite(expected) || !std::isfinite(ours)) {
    if ((std::isnan(expected) && std::isnan(ours)) || ours == expected) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << ours << " vs " << expected;
  }
  const double diff = std::fabs(ours - expected);
  if (diff <= tolerance * std::fabs(expected) || diff <= tolerance * magnitude) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << ours << " vs " << expected << ": difference " << diff
                                       << " exceeds " << tolerance << " of both |expected| and the "
                                       << "terms' magnitude " << magnitude;
}

std::vector<quant::DotIsa> supported_isas() {
  std::vector<quant::DotIsa> isas;
  for (const quant::DotIsa isa : quant::kDotIsas) {
    if (quant::is_supported(isa)) isas.push_back(isa);
  }
  return isas;
}

class KQuantDotOracle : public ::testing::Test {
 protected:
  void SetUp() override { oracle_ = &GgmlOracle::load(); }
  const GgmlOracle& oracle() const { return *oracle_; }

  template <typename Block>
  void check(void (*quantize)(std::span<const float>, std::span<Block>),
             void (*dequantize)(std::span<const Block>, std::span<float>),
             float (*(*kernel_for)(quant::DotIsa))(const Block*, const BlockQ8K*,
                                                   std::size_t) noexcept,
             float (*dot)(std::span<const Block>, std::span<const BlockQ8K>, Backend),
             float (GgmlOracle::*ggml_dot)(std::span<const Block>, std::span<const BlockQ8K>) const,
             float (GgmlOracle::*ggml_generic)(std::span<const Block>, std::span<const BlockQ8K>)
                 const) {
    int failures = 0;
    std::size_t compared = 0;
    for (const RowPair& pair : row_pairs()) {
      const std::size_t blocks = pair.w.size() / kBlockSize;
      std::vector<Block> w(blocks);
      std::vector<BlockQ8K> x(blocks);
      quantize(pair.w, w);
      quant::quantize_q8k(pair.x, x);
      std::vector<float> wd(pair.w.size()), xd(pair.x.size());
      dequantize(w, wd);
      quant::dequantize_q8k(x, xd);
      const Reference ref = reference(wd, xd);
      const float ggml = (oracle().*ggml_dot)(w, x);
      const float generic = (oracle().*ggml_generic)(w, x);
      EXPECT_TRUE(close(generic, ref.exact, ref.magnitude, kTolerance))
          << pair.name << ": ggml generic";
      EXPECT_TRUE(close(ggml, generic, ref.magnitude, kSimdTolerance))
          << pair.name << ": ggml SIMD";
      std::vector<std::pair<std::string, float>> ours = {{"public auto", dot(w, x, Backend::Auto)}};
      for (const quant::DotIsa isa : supported_isas()) {
        ours.emplace_back(std::string(quant::name(isa)),
                          kernel_for(isa)(w.data(), x.data(), blocks));
      }
      for (const auto& [variant, value] : ours) {
        const auto vs_generic = close(value, generic, ref.magnitude, kTolerance);
        const auto vs_exact = close(value, ref.exact, ref.magnitude, kTolerance);
        const auto vs_simd = close(value, ggml, ref.magnitude, kSimdTolerance);
        if (!vs_generic || !vs_exact || !vs_simd) {
          ADD_FAILURE() << pair.name << " on " << variant
                        << ": vs ggml generic: " << vs_generic.message()
                        << "; vs exact: " << vs_exact.message()
                        << "; vs ggml SIMD: " << vs_simd.message();
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

TEST_F(KQuantDotOracle, Q5KxQ8KMatchesGgmlOnEveryVariant) {
  check<BlockQ5K>(quant::quantize_q5k, quant::dequantize_q5k, quant::dot_q5k_q8k_kernel,
                  quant::dot_q5k_q8k, &GgmlOracle::vec_dot_q5k_q8k,
                  &GgmlOracle::vec_dot_q5k_q8k_generic);
}

TEST_F(KQuantDotOracle, Q6KxQ8KMatchesGgmlOnEveryVariant) {
  check<BlockQ6K>(quant::quantize_q6k, quant::dequantize_q6k, quant::dot_q6k_q8k_kernel,
                  quant::dot_q6k_q8k, &GgmlOracle::vec_dot_q6k_q8k,
                  &GgmlOracle::vec_dot_q6k_q8k_generic);
}

}  // namespace
}  // namespace brick::test
