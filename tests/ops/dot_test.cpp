#include "brick/ops/dot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

// Forward error bound of a float dot product summed in chains of at most n/16 + 8 roundings
// (any of the backends' accumulator layouts), against the double-accumulated reference.
double dot_error_bound(std::span<const float> a, std::span<const float> b) {
  double magnitude = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
  const double chain = static_cast<double>(a.size()) / 16.0 + 8.0;
  return chain * std::ldexp(1.0, -24) * magnitude + std::ldexp(1.0, -149);
}

class DotTest : public BackendTest {};
class DotVersusScalar : public BackendTest {};

TEST_P(DotTest, HandComputed) {
  const std::vector<float> a = {1.0f, 2.0f, 3.0f, -4.0f, 0.5f};
  const std::vector<float> b = {2.0f, -1.0f, 0.25f, 0.5f, 8.0f};
  EXPECT_EQ(dot(a, b, backend()), 2.0f - 2.0f + 0.75f - 2.0f + 4.0f);
}

TEST_P(DotTest, SumsExactlyWhenEveryPartialSumIsExact) {
  // Integers below 2^24 add exactly in any order: every backend must give the exact answer.
  for (std::size_t n : brick::test::kAwkwardLengths) {
    std::vector<float> a(n);
    std::vector<float> b(n);
    double expected = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 13) - 6.0f;
      b[i] = static_cast<float>(i % 7) + 1.0f;
      expected += static_cast<double>(a[i]) * b[i];
    }
    EXPECT_EQ(dot(a, b, backend()), static_cast<float>(expected)) << "n = " << n;
  }
}

TEST_P(DotTest, EmptyIsZero) {
  EXPECT_EQ(dot({}, {}, backend()), 0.0f);
}

TEST_P(DotTest, MismatchedSizesThrow) {
  const std::vector<float> a(8, 1.0f);
  const std::vector<float> b(7, 1.0f);
  EXPECT_THROW(dot(a, b, backend()), InvalidArgument);
}

TEST_P(DotVersusScalar, RandomAndAdversarialInputsWithinTheErrorBound) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> b = brick::test::normal(n, 7 * n + 1);
    for (const auto& pattern : brick::test::adversarial_patterns(n, n)) {
      const float expected = dot(pattern.values, b, Backend::Scalar);
      const float actual = dot(pattern.values, b, backend());
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual)) << pattern.name << " n = " << n;
        continue;
      }
      EXPECT_LE(std::fabs(static_cast<double>(actual) - expected),
                dot_error_bound(pattern.values, b) + std::fabs(expected) * std::ldexp(1.0, -24))
          << pattern.name << " n = " << n << ": " << actual << " vs " << expected;
    }
  }
}

TEST_P(DotVersusScalar, WithinTheBrickTolerance) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> a = brick::test::normal(n, n);
    const std::vector<float> b = brick::test::normal(n, n + 1);
    const float expected = dot(a, b, Backend::Scalar);
    const float actual = dot(a, b, backend());
    const AssertionOutcome outcome =
        test::compare(std::span(&actual, 1), std::span(&expected, 1), DotOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "n = " << n << ": " << outcome.summary();
  }
}

BRICK_OPS_INSTANTIATE(DotTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(DotVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
