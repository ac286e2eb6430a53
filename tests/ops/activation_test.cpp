#include "brick/ops/activation.hpp"

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

constexpr float kInf = std::numeric_limits<float>::infinity();

double silu_in_double(float x) {
  return x / (1.0 + std::exp(-static_cast<double>(x)));
}

class ActivationTest : public BackendTest {};
class ActivationVersusScalar : public BackendTest {};

TEST_P(ActivationTest, SiluHandComputed) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 10.0f};
  std::vector<float> out(x.size());
  silu(x, out, backend());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_NEAR(out[2], 0.7310585786f, 2e-7f);
  EXPECT_NEAR(out[3], -0.2689414214f, 1e-7f);
  EXPECT_NEAR(out[4], 9.9995460213f, 2e-6f);
}

TEST_P(ActivationTest, SiluEdgeValues) {
  const std::vector<float> x = {-100.0f, -kInf, kInf, std::numeric_limits<float>::quiet_NaN(),
                                1e30f};
  std::vector<float> out(x.size());
  silu(x, out, backend());
  EXPECT_EQ(out[0], 0.0f);  // exp(100) overflows: -100 / inf = -0
  EXPECT_TRUE(std::signbit(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], kInf);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], 1e30f);
}

TEST_P(ActivationTest, SwigluHandComputed) {
  const std::vector<float> gate = {0.0f, 1.0f, -1.0f, 30.0f};
  const std::vector<float> up = {5.0f, 2.0f, -3.0f, 0.5f};
  std::vector<float> out(4);
  swiglu(gate, up, out, backend());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2 * 0.7310585786f, 4e-7f);
  EXPECT_NEAR(out[2], 3 * 0.2689414214f, 2e-7f);
  EXPECT_NEAR(out[3], 15.0f, 2e-6f);
}

TEST_P(ActivationTest, MatchTheDoublePrecisionFormula) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> x = brick::test::normal(n, n, 0.0f, 6.0f);
    const std::vector<float> up = brick::test::normal(n, n + 1);
    std::vector<float> silu_out(n);
    std::vector<float> swiglu_out(n);
    silu(x, silu_out, backend());
    swiglu(x, up, swiglu_out, backend());
    for (std::size_t i = 0; i < n; ++i) {
      // exp within 2 ulp, then an add, a divide and for swiglu a multiply: under 6 ulp
      const double expected = silu_in_double(x[i]);
      ASSERT_NEAR(silu_out[i], expected, std::fabs(expected) * 6 * std::ldexp(1.0, -24) + 1e-38)
          << "x = " << x[i];
      const double gated = expected * up[i];
      ASSERT_NEAR(swiglu_out[i], gated, std::fabs(gated) * 6 * std::ldexp(1.0, -24) + 1e-38)
          << "x = " << x[i] << " up = " << up[i];
    }
  }
}

TEST_P(ActivationTest, InPlace) {
  std::vector<float> gate = brick::test::normal(65, 1);
  std::vector<float> up = brick::test::normal(65, 2);
  std::vector<float> expected(65);
  swiglu(gate, up, expected, backend());
  std::vector<float> gate_copy = gate;
  swiglu(gate, up, gate, backend());
  EXPECT_EQ(gate, expected);
  swiglu(gate_copy, up, up, backend());
  EXPECT_EQ(up, expected);
  std::vector<float> x = brick::test::normal(17, 3);
  std::vector<float> silu_expected(17);
  silu(x, silu_expected, backend());
  silu(x, x, backend());
  EXPECT_EQ(x, silu_expected);
}

TEST_P(ActivationTest, BadArgumentsThrow) {
  std::vector<float> eight(8);
  std::vector<float> seven(7);
  EXPECT_THROW(silu(eight, seven, backend()), InvalidArgument);
  EXPECT_THROW(swiglu(eight, seven, eight, backend()), InvalidArgument);
  EXPECT_THROW(swiglu(eight, eight, seven, backend()), InvalidArgument);
  std::vector<float> buffer(16);
  const std::span<float> whole(buffer);
  EXPECT_THROW(silu(whole.first(8), whole.subspan(3, 8), backend()), InvalidArgument);
  EXPECT_THROW(swiglu(eight, whole.first(8), whole.subspan(1, 8), backend()), InvalidArgument);
}

TEST_P(ActivationVersusScalar, RandomAndAdversarialInputsWithinTheBrickTolerance) {
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const std::vector<float> up = brick::test::normal(n, 3 * n);
    auto patterns = brick::test::adversarial_patterns(n, n);
    patterns.push_back({"wide", brick::test::uniform(n, n + 2, -120.0f, 120.0f)});
    for (const auto& pattern : patterns) {
      std::vector<float> expected(n);
      std::vector<float> actual(n);
      silu(pattern.values, expected, Backend::Scalar);
      silu(pattern.values, actual, backend());
      AssertionOutcome outcome = test::compare(actual, expected, SiluOp::equivalence());
      EXPECT_TRUE(outcome.passed) << "silu " << pattern.name << " n = " << n << ": "
                                  << outcome.summary();
      swiglu(pattern.values, up, expected, Backend::Scalar);
      swiglu(pattern.values, up, actual, backend());
      outcome = test::compare(actual, expected, SwigluOp::equivalence());
      EXPECT_TRUE(outcome.passed) << "swiglu " << pattern.name << " n = " << n << ": "
                                  << outcome.summary();
    }
  }
}

BRICK_OPS_INSTANTIATE(ActivationTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(ActivationVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
