#include "brick/core/assertion.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace brick {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(UlpDistance, CountsRepresentableFloatsBetween) {
  EXPECT_EQ(ulp_distance(1.0f, 1.0f), 0u);
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0u);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1u);
  EXPECT_EQ(ulp_distance(-1.0f, std::nextafter(-1.0f, -2.0f)), 1u);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(-tiny, tiny), 2u);
  EXPECT_EQ(ulp_distance(kNaN, kNaN), 0u);
  EXPECT_EQ(ulp_distance(kNaN, 1.0f), std::numeric_limits<std::uint64_t>::max());
}

TEST(Equivalence, PassesWithinToleranceAndReportsTheWorstError) {
  const std::vector<float> expected = {1.0f, 2.0f, -4.0f};
  const std::vector<float> actual = {1.0f, 2.000001f, -4.0001f};
  AssertionOutcome outcome;
  check_equivalence({Backend::Scalar, 1e-3, 0.0}, actual, expected, outcome);
  EXPECT_TRUE(outcome.evaluated);
  EXPECT_TRUE(outcome.passed);
  EXPECT_NEAR(outcome.max_abs_error, 1e-4, 1e-6);
  EXPECT_NEAR(outcome.max_rel_error, 2.5e-5, 1e-6);
  EXPECT_EQ(outcome.max_ulp, ulp_distance(-4.0001f, -4.0f));
  EXPECT_FALSE(outcome.first_bad_index.has_value());
}

TEST(Equivalence, FailureReportsFirstIndexCountAndNumbers) {
  const std::vector<float> expected = {0.0f, 1.0f, 2.0f, 3.0f};
  const std::vector<float> actual = {0.0f, 1.5f, 2.0f, 2.0f};
  AssertionOutcome outcome;
  check_equivalence({Backend::Scalar, 0.1, 0.0}, actual, expected, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(outcome.violations, 2u);
  ASSERT_TRUE(outcome.first_bad_index.has_value());
  EXPECT_EQ(*outcome.first_bad_index, 1u);
  EXPECT_FLOAT_EQ(outcome.first_bad_value, 1.5f);
  EXPECT_FLOAT_EQ(outcome.first_bad_expected, 1.0f);
  EXPECT_DOUBLE_EQ(outcome.max_abs_error, 1.0);
  EXPECT_NEAR(outcome.max_rel_error, 0.5, 1e-12);
  EXPECT_NE(outcome.summary().find("first at [1]"), std::string::npos);
}

TEST(Equivalence, RelativeToleranceScalesWithMagnitude) {
  const std::vector<float> expected = {1000.0f};
  const std::vector<float> actual = {1000.5f};
  AssertionOutcome outcome;
  check_equivalence({Backend::Scalar, 0.0, 1e-3}, actual, expected, outcome);
  EXPECT_TRUE(outcome.passed);
  check_equivalence({Backend::Scalar, 0.0, 1e-4}, actual, expected, outcome);
  EXPECT_FALSE(outcome.passed);
}

TEST(Equivalence, NaNAndInfinityMatchOnlyThemselves) {
  AssertionOutcome outcome;
  check_equivalence({}, std::vector<float>{kNaN, kInf, -kInf},
                    std::vector<float>{kNaN, kInf, -kInf}, outcome);
  EXPECT_TRUE(outcome.passed);
  check_equivalence({}, std::vector<float>{kInf}, std::vector<float>{-kInf}, outcome);
  EXPECT_FALSE(outcome.passed);
  check_equivalence({}, std::vector<float>{kNaN}, std::vector<float>{0.0f}, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(*outcome.first_bad_index, 0u);
}

TEST(Equivalence, SizeMismatchFails) {
  AssertionOutcome outcome;
  check_equivalence({}, std::vector<float>{1.0f, 2.0f}, std::vector<float>{1.0f}, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(*outcome.first_bad_index, 1u);
}

TEST(Bounds, InclusiveLimitsAndNaNFails) {
  AssertionOutcome outcome;
  check_bounds({-1.0f, 1.0f}, std::vector<float>{-1.0f, 0.0f, 1.0f}, outcome);
  EXPECT_TRUE(outcome.passed);
  check_bounds({-1.0f, 1.0f}, std::vector<float>{0.0f, 1.5f, kNaN, -3.0f}, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(outcome.violations, 3u);
  EXPECT_EQ(*outcome.first_bad_index, 1u);
  EXPECT_FLOAT_EQ(outcome.first_bad_value, 1.5f);
}

TEST(Finite, CatchesNaNAndInfinity) {
  AssertionOutcome outcome;
  check_finite(std::vector<float>{1.0f, std::numeric_limits<float>::max()}, outcome);
  EXPECT_TRUE(outcome.passed);
  check_finite(std::vector<float>{1.0f, 2.0f, -kInf, kNaN}, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(outcome.violations, 2u);
  EXPECT_EQ(*outcome.first_bad_index, 2u);
}

TEST(Custom, EvaluatesThePredicate) {
  const Custom sums_to_one{"sums to one", [](std::span<const float> v) {
                             float s = 0;
                             for (float x : v) s += x;
                             return std::fabs(s - 1.0f) < 1e-6f;
                           }};
  AssertionOutcome outcome;
  check_custom(sums_to_one, std::vector<float>{0.25f, 0.75f}, outcome);
  EXPECT_TRUE(outcome.passed);
  check_custom(sums_to_one, std::vector<float>{0.25f, 0.5f}, outcome);
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(describe(Assertion{sums_to_one}), "custom:sums to one");
}

TEST(Assertion, CheapnessAndDescriptions) {
  EXPECT_TRUE(is_cheap(Finite{}));
  EXPECT_TRUE(is_cheap(Bounds{0, 1}));
  EXPECT_FALSE(is_cheap(Equivalence{}));
  EXPECT_TRUE(is_cheap(Custom{"x", nullptr}));
  EXPECT_EQ(describe(Assertion{Bounds{-1, 1}}), "bounds[-1, 1]");
  EXPECT_EQ(describe(Assertion{Equivalence{Backend::Scalar, 1e-5, 1e-4}}),
            "equivalence(vs scalar, abs 1e-05, rel 0.0001)");
}

}  // namespace
}  // namespace brick
