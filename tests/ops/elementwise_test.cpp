#include "brick/ops/elementwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

class ElementwiseTest : public BackendTest {};
class ElementwiseVersusScalar : public BackendTest {};

TEST_P(ElementwiseTest, AxpyHandComputed) {
  const std::vector<float> x = {1.0f, -2.0f, 0.5f};
  std::vector<float> y = {10.0f, 10.0f, 10.0f};
  axpy(2.0f, x, y, backend());
  EXPECT_EQ(y, (std::vector<float>{12.0f, 6.0f, 11.0f}));
}

TEST_P(ElementwiseTest, AddHandComputed) {
  const std::vector<float> a = {1.0f, -2.0f, 0.5f, 1e30f};
  const std::vector<float> b = {0.25f, 2.0f, 0.5f, -1e30f};
  std::vector<float> out(4);
  add(a, b, out, backend());
  EXPECT_EQ(out, (std::vector<float>{1.25f, 0.0f, 1.0f, 0.0f}));
}

TEST_P(ElementwiseTest, AddInPlaceOnEitherOperand) {
  std::vector<float> a = brick::test::uniform(17, 1);
  std::vector<float> b = brick::test::uniform(17, 2);
  std::vector<float> expected(17);
  for (std::size_t i = 0; i < 17; ++i) expected[i] = a[i] + b[i];
  std::vector<float> a_copy = a;
  add(a, b, a, backend());
  EXPECT_EQ(a, expected);
  add(a_copy, b, b, backend());
  EXPECT_EQ(b, expected);
}

TEST_P(ElementwiseTest, EmptyIsANoOp) {
  std::vector<float> none;
  EXPECT_NO_THROW(add(none, none, none, backend()));
  EXPECT_NO_THROW(axpy(1.0f, none, none, backend()));
}

TEST_P(ElementwiseTest, BadArgumentsThrow) {
  std::vector<float> eight(8);
  std::vector<float> seven(7);
  EXPECT_THROW(add(eight, seven, eight, backend()), InvalidArgument);
  EXPECT_THROW(add(eight, eight, seven, backend()), InvalidArgument);
  EXPECT_THROW(axpy(1.0f, eight, seven, backend()), InvalidArgument);
  std::vector<float> buffer(16);
  const std::span<float> whole(buffer);
  // Shifted by one element: an element-wise kernel would read what it already wrote.
  EXPECT_THROW(add(whole.first(8), whole.first(8), whole.subspan(1, 8), backend()),
               InvalidArgument);
  EXPECT_THROW(axpy(1.0f, whole.first(8), whole.subspan(4, 8), backend()), InvalidArgument);
}

TEST_P(ElementwiseVersusScalar, AddIsBitIdentical) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> b = brick::test::normal(n, n);
    for (const auto& pattern : brick::test::adversarial_patterns(n, n)) {
      std::vector<float> expected(n);
      std::vector<float> actual(n);
      add(pattern.values, b, expected, Backend::Scalar);
      add(pattern.values, b, actual, backend());
      const AssertionOutcome outcome = test::compare(actual, expected, AddOp::equivalence());
      EXPECT_TRUE(outcome.passed) << pattern.name << " n = " << n << ": " << outcome.summary();
      EXPECT_EQ(outcome.max_ulp, 0u) << pattern.name << " n = " << n;
    }
  }
}

TEST_P(ElementwiseVersusScalar, AxpyDiffersOnlyByTheProductRounding) {
  // The fused multiply-add skips one rounding of alpha * x: at most half an ulp of the product.
  const float alpha = 0.3f;
  for (std::size_t n : brick::test::kAwkwardLengths) {
    for (const auto& pattern : brick::test::adversarial_patterns(n, n + 5)) {
      std::vector<float> expected = brick::test::normal(n, n);
      std::vector<float> actual = expected;
      axpy(alpha, pattern.values, expected, Backend::Scalar);
      axpy(alpha, pattern.values, actual, backend());
      for (std::size_t i = 0; i < n; ++i) {
        const double product = std::fabs(static_cast<double>(alpha) * pattern.values[i]);
        const double bound = product * std::ldexp(1.0, -24) +
                             std::fabs(static_cast<double>(expected[i])) * std::ldexp(1.0, -23) +
                             std::ldexp(1.0, -148);  // denormal products round in absolute steps
        ASSERT_LE(std::fabs(static_cast<double>(actual[i]) - expected[i]), bound)
            << pattern.name << " n = " << n << " i = " << i;
      }
    }
  }
}

BRICK_OPS_INSTANTIATE(ElementwiseTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(ElementwiseVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
