#include "brick/ops/softmax.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "brick/core/error.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

constexpr float kInf = std::numeric_limits<float>::infinity();

// exp in double, the sum in double: the exact softmax rounded once.
std::vector<double> softmax_in_double(std::span<const float> x) {
  double max = -INFINITY;
  for (float v : x) max = std::max(max, static_cast<double>(v));
  std::vector<double> out(x.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sum += out[i] = std::exp(static_cast<double>(x[i]) - max);
  for (double& v : out) v /= sum;
  return out;
}

class SoftmaxTest : public BackendTest {};
class SoftmaxVersusScalar : public BackendTest {};

TEST_P(SoftmaxTest, HandComputed) {
  // Equal scores share equally; powers of two come out exact.
  const std::vector<float> equal = {3.0f, 3.0f, 3.0f, 3.0f};
  std::vector<float> out(4);
  softmax(equal, out, backend());
  EXPECT_EQ(out, (std::vector<float>(4, 0.25f)));
  const std::vector<float> one = {-7.5f};
  std::vector<float> single(1);
  softmax(one, single, backend());
  EXPECT_EQ(single[0], 1.0f);
  // [0, ln 3]: 1/4 and 3/4.
  const std::vector<float> pair = {0.0f, std::log(3.0f)};
  std::vector<float> two(2);
  softmax(pair, two, backend());
  EXPECT_NEAR(two[0], 0.25f, 1e-7f);
  EXPECT_NEAR(two[1], 0.75f, 1e-7f);
}

TEST_P(SoftmaxTest, MatchesTheDoublePrecisionFormula) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> x = brick::test::normal(n, n, 0.0f, 4.0f);
    std::vector<float> out(n);
    softmax(x, out, backend());
    const std::vector<double> expected = softmax_in_double(x);
    const float max = *std::max_element(x.begin(), x.end());
    for (std::size_t i = 0; i < n; ++i) {
      // Rounding x - max to float moves exp's argument by up to half an ulp of |x - max|, a
      // relative error of |x - max| * 2^-24 in the result; exp within 2 ulp (libm 1) and three
      // roundings.
      const double ulps = std::fabs(x[i] - max) + 6.0;
      ASSERT_NEAR(out[i], expected[i], expected[i] * ulps * std::ldexp(1.0, -24) + 1e-37)
          << "n = " << n << " i = " << i;
    }
    EXPECT_NEAR(std::accumulate(out.begin(), out.end(), 0.0), 1.0, 1e-5) << "n = " << n;
  }
}

TEST_P(SoftmaxTest, MaskedEntriesAreExactlyZero) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    std::vector<float> x = brick::test::normal(n, n);
    // A causal-style mask: every third entry and the whole second half are -inf, the first stays.
    for (std::size_t i = 1; i < n; ++i) {
      if (i % 3 == 0 || i >= n / 2) x[i] = -kInf;
    }
    std::vector<float> out(n);
    softmax(x, out, backend());
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (x[i] == -kInf) {
        ASSERT_EQ(out[i], 0.0f) << "n = " << n << " i = " << i;
        ASSERT_FALSE(std::signbit(out[i]));
      } else {
        ASSERT_GT(out[i], 0.0f) << "n = " << n << " i = " << i;
      }
      sum += out[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "n = " << n;
  }
}

TEST_P(SoftmaxTest, AllMaskedRowIsAllZeros) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> x(n, -kInf);
    std::vector<float> out(n, 42.0f);
    softmax(x, out, backend());
    EXPECT_EQ(out, std::vector<float>(n, 0.0f)) << "n = " << n;
  }
}

TEST_P(SoftmaxTest, HugeValuesDoNotOverflow) {
  const std::vector<float> x = {3e38f, -3e38f, 3e38f, 0.0f, 1e30f};
  std::vector<float> out(5);
  softmax(x, out, backend());
  EXPECT_EQ(out, (std::vector<float>{0.5f, 0.0f, 0.5f, 0.0f, 0.0f}));
}

TEST_P(SoftmaxTest, NanOrPlusInfinityPoisonsTheRow) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), kInf}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{64}}) {
      std::vector<float> x = brick::test::normal(n, n);
      x[n / 2] = bad;
      std::vector<float> out(n);
      softmax(x, out, backend());
      for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(out[i])) << bad << " n = " << n;
    }
  }
  // Masked everywhere except a NaN: still NaN, not the all-masked zeros.
  std::vector<float> masked(9, -kInf);
  masked[4] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> out(9);
  softmax(masked, out, backend());
  for (float v : out) EXPECT_TRUE(std::isnan(v));
}

TEST_P(SoftmaxTest, InPlace) {
  std::vector<float> x = brick::test::normal(1000, 5);
  std::vector<float> expected(1000);
  softmax(x, expected, backend());
  softmax(x, x, backend());
  EXPECT_EQ(x, expected);
}

TEST_P(SoftmaxTest, BadArgumentsThrow) {
  std::vector<float> none;
  std::vector<float> eight(8);
  std::vector<float> seven(7);
  EXPECT_THROW(softmax(none, none, backend()), InvalidArgument);
  EXPECT_THROW(softmax(eight, seven, backend()), InvalidArgument);
  std::vector<float> buffer(16);
  const std::span<float> whole(buffer);
  EXPECT_THROW(softmax(whole.first(8), whole.subspan(1, 8), backend()), InvalidArgument);
}

TEST_P(SoftmaxVersusScalar, RandomAdversarialAndMaskedInputsWithinTheBrickTolerance) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    auto patterns = brick::test::adversarial_patterns(n, n);
    std::vector<float> masked = brick::test::normal(n, n + 9, 0.0f, 10.0f);
    for (std::size_t i = 0; i < n; i += 2) masked[i] = -kInf;
    patterns.push_back({"masked", masked});
    for (const auto& pattern : patterns) {
      std::vector<float> expected(n);
      std::vector<float> actual(n);
      softmax(pattern.values, expected, Backend::Scalar);
      softmax(pattern.values, actual, backend());
      const AssertionOutcome outcome = test::compare(actual, expected, SoftmaxOp::equivalence());
      EXPECT_TRUE(outcome.passed) << pattern.name << " n = " << n << ": " << outcome.summary();
    }
  }
}

BRICK_OPS_INSTANTIATE(SoftmaxTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(SoftmaxVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
