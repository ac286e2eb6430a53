#include "brick/ops/rms_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "brick/core/error.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

class RmsNormTest : public BackendTest {};
class RmsNormVersusScalar : public BackendTest {};

TEST_P(RmsNormTest, HandComputed) {
  // mean(x^2) = (9 + 16) / 2 = 12.5; with eps = 3.5 the scale is 1 / sqrt(16) = 0.25 exactly.
  const std::vector<float> x = {3.0f, -4.0f};
  const std::vector<float> weight = {2.0f, 0.5f};
  std::vector<float> out(2);
  rms_norm(x, weight, 3.5f, out, backend());
  EXPECT_EQ(out, (std::vector<float>{1.5f, -0.5f}));
}

TEST_P(RmsNormTest, MatchesTheDoublePrecisionFormula) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> x = brick::test::normal(n, n, 0.5f, 2.0f);
    const std::vector<float> weight = brick::test::uniform(n, n + 1, 0.5f, 1.5f);
    const float eps = 1e-5f;
    std::vector<float> out(n);
    rms_norm(x, weight, eps, out, backend());
    double sum = 0.0;
    for (float v : x) sum += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(n) + eps);
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = x[i] * scale * weight[i];
      // a handful of float roundings (mean, sqrt, divide, two products): well under 8 ulp
      ASSERT_NEAR(out[i], expected, std::fabs(expected) * 8 * std::ldexp(1.0, -24) + 1e-30)
          << "n = " << n << " i = " << i;
    }
  }
}

TEST_P(RmsNormTest, ZerosStayZeroAndNothingOverflows) {
  const std::vector<float> zeros(17, 0.0f);
  const std::vector<float> ones(17, 1.0f);
  std::vector<float> out(17, 5.0f);
  rms_norm(zeros, ones, 1e-6f, out, backend());
  EXPECT_EQ(out, zeros);
  // With eps = 0 the all-zero row would be 0 * inf: NaN, exactly as ggml computes it.
  rms_norm(zeros, ones, 0.0f, out, backend());
  EXPECT_TRUE(std::isnan(out[0]));
}

TEST_P(RmsNormTest, InPlace) {
  std::vector<float> x = brick::test::normal(65, 3);
  const std::vector<float> weight = brick::test::uniform(65, 4);
  std::vector<float> expected(65);
  rms_norm(x, weight, 1e-6f, expected, backend());
  rms_norm(x, weight, 1e-6f, x, backend());
  EXPECT_EQ(x, expected);
}

TEST_P(RmsNormTest, BadArgumentsThrow) {
  std::vector<float> eight(8, 1.0f);
  std::vector<float> seven(7, 1.0f);
  std::vector<float> none;
  EXPECT_THROW(rms_norm(none, none, 1e-6f, none, backend()), InvalidArgument);
  EXPECT_THROW(rms_norm(eight, seven, 1e-6f, eight, backend()), InvalidArgument);
  EXPECT_THROW(rms_norm(eight, eight, 1e-6f, seven, backend()), InvalidArgument);
  EXPECT_THROW(rms_norm(eight, eight, -1e-6f, eight, backend()), InvalidArgument);
  EXPECT_THROW(rms_norm(eight, eight, std::numeric_limits<float>::quiet_NaN(), eight, backend()),
               InvalidArgument);
  std::vector<float> buffer(16, 1.0f);
  const std::span<float> whole(buffer);
  EXPECT_THROW(rms_norm(whole.first(8), eight, 1e-6f, whole.subspan(2, 8), backend()),
               InvalidArgument);
}

TEST_P(RmsNormVersusScalar, RandomAndAdversarialInputsWithinTheBrickTolerance) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> weight = brick::test::uniform(n, n, 0.5f, 1.5f);
    for (const auto& pattern : brick::test::adversarial_patterns(n, n)) {
      std::vector<float> expected(n);
      std::vector<float> actual(n);
      rms_norm(pattern.values, weight, 1e-6f, expected, Backend::Scalar);
      rms_norm(pattern.values, weight, 1e-6f, actual, backend());
      const AssertionOutcome outcome = test::compare(actual, expected, RmsNormOp::equivalence());
      EXPECT_TRUE(outcome.passed) << pattern.name << " n = " << n << ": " << outcome.summary();
      EXPECT_LE(outcome.max_ulp, 2u) << pattern.name << " n = " << n;
    }
  }
}

BRICK_OPS_INSTANTIATE(RmsNormTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(RmsNormVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
