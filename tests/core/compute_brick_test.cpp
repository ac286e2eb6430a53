#include "brick/core/compute_brick.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "brick/core/brick_layer.hpp"
#include "core/scale_op.hpp"

namespace brick {
namespace {

using test::ScaleOp;

// A backend other than Scalar when the machine has one, so Equivalence compares two code paths.
Backend fast_backend() {
  return best_backend();
}

const std::vector<float> kInput = {1.0f, -2.0f, 3.0f, 0.5f};

TEST(ComputeBrick, CannotBeBuiltWithoutAssertions) {
  EXPECT_THROW(ComputeBrick<ScaleOp>(ScaleOp{}, {}), InvalidArgument);
}

TEST(ComputeBrick, ExplicitBackendIsHonouredOrATypedErrorAtConstruction) {
  for (Backend backend : kConcreteBackends) {
    if (is_supported(backend)) {
      EXPECT_EQ(ComputeBrick<ScaleOp>(ScaleOp{}, {Finite{}}, backend).backend(), backend);
    } else {
      EXPECT_THROW(ComputeBrick<ScaleOp>(ScaleOp{}, {Finite{}}, backend), BackendUnavailable);
    }
  }
}

TEST(ComputeBrick, RunWritesOutputAndMetrics) {
  ComputeBrick brick(ScaleOp{}, {Finite{}}, Backend::Scalar, TokenBudget::from_us_per_token(1e9));
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_TRUE(result.has_value());
  EXPECT_THAT(out, ::testing::ElementsAre(2.0f, -4.0f, 6.0f, 1.0f));
  EXPECT_EQ(result->brick, "scale");
  EXPECT_EQ(result->id, BrickId::Activation);
  EXPECT_EQ(result->backend, Backend::Scalar);
  EXPECT_EQ(result->metrics.tokens, 1u);
  EXPECT_GT(result->metrics.ns, 0u);
  EXPECT_DOUBLE_EQ(result->metrics.us_per_token, result->metrics.ns / 1e3);
  EXPECT_TRUE(result->metrics.budget_met);
  EXPECT_LT(result->metrics.utilisation, 1.0);
  ASSERT_EQ(result->assertions.size(), 1u);
  EXPECT_TRUE(result->assertions[0].evaluated);
  EXPECT_TRUE(result->passed());
}

TEST(ComputeBrick, WrongOutputSizeIsInvalidArgument) {
  ComputeBrick brick(ScaleOp{}, {Finite{}});
  std::vector<float> out(kInput.size() + 1);
  EXPECT_THROW((void)brick.run({kInput}, out), InvalidArgument);
}

TEST(ComputeBrick, DefaultPolicyRunsOnlyCheapAssertions) {
  ScaleOp op;
  ComputeBrick brick(op, {Equivalence{}, Bounds{-10, 10}, Finite{}}, fast_backend());
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->assertions[0].evaluated);
  EXPECT_TRUE(result->assertions[1].evaluated);
  EXPECT_TRUE(result->assertions[2].evaluated);
  EXPECT_EQ(op.calls->size(), 1u) << "the Equivalence baseline must not run under Cheap";
}

TEST(ComputeBrick, EquivalenceReRunsTheBaselineAndComparesElementwise) {
  if (fast_backend() == Backend::Scalar) GTEST_SKIP() << "no SIMD backend to compare";
  ScaleOp op;
  op.drift = 0.25f;
  ComputeBrick brick(op, {Equivalence{Backend::Scalar, 0.1, 0.0}}, fast_backend(), {},
                     {CheckPolicy::All, OnFailure::Report, false});
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_TRUE(result.has_value()) << "Report policy keeps run() successful";
  EXPECT_THAT(*op.calls, ::testing::ElementsAre(fast_backend(), Backend::Scalar));
  const AssertionOutcome& eq = result->assertions[0];
  EXPECT_FALSE(eq.passed);
  EXPECT_EQ(eq.violations, kInput.size());
  EXPECT_EQ(*eq.first_bad_index, 0u);
  EXPECT_FLOAT_EQ(eq.first_bad_value, 2.25f);
  EXPECT_FLOAT_EQ(eq.first_bad_expected, 2.0f);
  EXPECT_DOUBLE_EQ(eq.max_abs_error, 0.25);
  EXPECT_DOUBLE_EQ(eq.max_rel_error, 0.25);  // 0.25 / |1.0| at x = 0.5
  EXPECT_FALSE(result->passed());
}

TEST(ComputeBrick, ErrorPolicyReturnsAssertionFailedWithTheNumbers) {
  ComputeBrick brick(ScaleOp{}, {Bounds{-3.0f, 3.0f}}, Backend::Scalar, {},
                     {CheckPolicy::Cheap, OnFailure::Error, false});
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_FALSE(result.has_value());
  const auto* failed = std::get_if<AssertionFailed>(&result.error());
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->brick, "scale");
  EXPECT_EQ(failed->outcome.violations, 2u);  // -4 and 6
  EXPECT_EQ(*failed->outcome.first_bad_index, 1u);
  EXPECT_FLOAT_EQ(failed->outcome.first_bad_value, -4.0f);
  EXPECT_NE(message(result.error()).find("bounds[-3, 3]"), std::string::npos);
}

TEST(ComputeBrick, BudgetExceededOnlyWhenEnforced) {
  // No real op finishes in a picosecond.
  const auto impossible = TokenBudget::from_us_per_token(1e-6);
  ComputeBrick lenient(ScaleOp{}, {Finite{}}, Backend::Scalar, impossible);
  std::vector<float> out(kInput.size());
  const auto reported = lenient.run({kInput}, out);
  ASSERT_TRUE(reported.has_value());
  EXPECT_FALSE(reported->metrics.budget_met);
  EXPECT_GT(reported->metrics.utilisation, 1.0);

  ComputeBrick strict(ScaleOp{}, {Finite{}}, Backend::Scalar, impossible,
                      {CheckPolicy::Cheap, OnFailure::Report, true});
  const auto enforced = strict.run({kInput}, out);
  ASSERT_FALSE(enforced.has_value());
  const auto* exceeded = std::get_if<BudgetExceeded>(&enforced.error());
  ASSERT_NE(exceeded, nullptr);
  EXPECT_DOUBLE_EQ(exceeded->limit_us, 1e-6);
  EXPECT_GT(exceeded->actual_us, exceeded->limit_us);
  EXPECT_DOUBLE_EQ(exceeded->utilisation, exceeded->actual_us / exceeded->limit_us);
}

TEST(ComputeBrick, VerifyRunsEveryAssertionWhateverThePolicy) {
  ScaleOp op;
  ComputeBrick brick(op,
                     {Equivalence{}, Finite{},
                      Custom{"positive",
                             [](std::span<const float> v) {
                               for (float x : v) {
                                 if (x <= 0) return false;
                               }
                               return true;
                             }}},
                     fast_backend(), {}, {CheckPolicy::None, OnFailure::Report, false});
  const VerifyReport report = brick.verify({kInput});
  ASSERT_EQ(report.assertions.size(), 3u);
  for (const auto& outcome : report.assertions) EXPECT_TRUE(outcome.evaluated);
  EXPECT_TRUE(report.assertions[0].passed);
  EXPECT_TRUE(report.assertions[1].passed);
  EXPECT_FALSE(report.assertions[2].passed) << "-4 is not positive";
  EXPECT_FALSE(report.passed());
}

// The baseline used to run on the input after the op had overwritten it in place, and reported a
// difference that was not there.
TEST(ComputeBrick, AnInPlaceRunWithEveryCheckComparesAgainstTheSameInput) {
  ComputeBrick brick(ScaleOp{}, {Equivalence{}, Finite{}}, fast_backend(), {},
                     {CheckPolicy::All, OnFailure::Error, false});
  std::vector<float> buffer = kInput;
  const auto result = brick.run({buffer}, buffer);
  ASSERT_TRUE(result.has_value()) << message(result.error());
  EXPECT_THAT(buffer, ::testing::ElementsAre(2.0f, -4.0f, 6.0f, 1.0f));
  EXPECT_TRUE(result->assertions[0].evaluated);
  EXPECT_EQ(result->assertions[0].max_abs_error, 0.0);

  // A fast path that really diverges is still caught in place, against the original input.
  if (fast_backend() == Backend::Scalar) return;
  ScaleOp drifting;
  drifting.drift = 0.25f;
  ComputeBrick caught(drifting, {Equivalence{Backend::Scalar, 0.1, 0.0}}, fast_backend(), {},
                      {CheckPolicy::All, OnFailure::Report, false});
  buffer = kInput;
  const auto reported = caught.run({buffer}, buffer);
  ASSERT_TRUE(reported.has_value());
  EXPECT_FALSE(reported->assertions[0].passed);
  EXPECT_FLOAT_EQ(reported->assertions[0].first_bad_expected, 2.0f);
  EXPECT_THAT(buffer, ::testing::ElementsAre(2.25f, -3.75f, 6.25f, 1.25f)) << "out holds the op's result";
}

// A Custom predicate looks only at the output, so the default policy runs it; it used to be skipped,
// leaving a brick whose only assertion is Custom checking nothing on run().
TEST(ComputeBrick, ABrickWhoseOnlyAssertionIsCustomChecksItUnderTheDefaultPolicy) {
  ComputeBrick brick(ScaleOp{},
                     {Custom{"positive",
                             [](std::span<const float> v) {
                               return std::all_of(v.begin(), v.end(), [](float x) { return x > 0; });
                             }}},
                     Backend::Scalar);
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->assertions[0].evaluated);
  EXPECT_FALSE(result->assertions[0].passed) << "-4 is not positive";
}

TEST(ComputeBrick, PolicyValuesOutsideTheirEnumsAreInvalidArguments) {
  EXPECT_THROW(ComputeBrick(ScaleOp{}, {Finite{}}, Backend::Scalar, {}, {static_cast<CheckPolicy>(7)}),
               InvalidArgument);
  ComputeBrick brick(ScaleOp{}, {Finite{}}, Backend::Scalar);
  EXPECT_THROW(brick.set_policy({CheckPolicy::All, static_cast<OnFailure>(9), false}), InvalidArgument);
  EXPECT_EQ(brick.policy().checks, CheckPolicy::Cheap);
}

TEST(ComputeBrick, FiniteCatchesOverflow) {
  ScaleOp op;
  op.scale = std::numeric_limits<float>::max();
  ComputeBrick brick(op, {Finite{}}, Backend::Scalar);
  std::vector<float> out(kInput.size());
  const auto result = brick.run({kInput}, out);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->assertions[0].passed);
  EXPECT_EQ(*result->assertions[0].first_bad_index, 1u);
}

TEST(BrickLayer, RunsMembersInOrderAndComposesBudgets) {
  ScaleOp first_op;
  ScaleOp second_op;
  second_op.scale = 0.5f;
  second_op.brick_id = BrickId::Residual;
  ComputeBrick first(first_op, {Finite{}}, Backend::Scalar, TokenBudget::from_us_per_token(1e6));
  ComputeBrick second(second_op, {Finite{}}, Backend::Scalar, TokenBudget::from_us_per_token(2e6));
  std::vector<float> mid(kInput.size()), out(kInput.size());
  const ScaleOp::Input first_in{kInput};
  const ScaleOp::Input second_in{mid};

  BrickLayer layer("layer0");
  layer.add(first, first_in, mid).add(second, second_in, out);
  EXPECT_EQ(layer.size(), 2u);
  EXPECT_DOUBLE_EQ(layer.budget_us_per_token(), 3e6);

  const auto report = layer.run();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(out, kInput) << "2x then 0.5x is the identity";
  ASSERT_EQ(report->members.size(), 2u);
  EXPECT_EQ(report->members[1].id, BrickId::Residual);
  const auto& a = report->members[0].metrics;
  const auto& b = report->members[1].metrics;
  EXPECT_EQ(report->total_ns, a.ns + b.ns);
  EXPECT_DOUBLE_EQ(report->us_per_token, a.us_per_token + b.us_per_token);
  const double slowest = std::max(a.us_per_token, b.us_per_token);
  EXPECT_DOUBLE_EQ(report->throughput_ceiling_tokens_per_s, 1e6 / slowest);
  EXPECT_EQ(report->bottleneck, "scale");
  EXPECT_TRUE(report->budget_met);
}

struct RecordingObserver : LayerObserver {
  std::vector<std::string> events;
  void on_layer_begin(std::size_t index) override {
    events.push_back("layer " + std::to_string(index));
  }
  void on_layer_end() override { events.push_back("end"); }
  void on_brick_begin(BrickId id, std::string_view) override {
    events.push_back(std::string("begin ") + std::string(name(id)));
  }
  void on_brick_end(BrickId id, std::string_view brick, const RunReport* report) override {
    events.push_back(std::string(report ? "ok " : "error ") + std::string(name(id)) + " " +
                     std::string(brick));
  }
};

TEST(BrickLayer, ObserverSeesEveryMemberInOrder) {
  ScaleOp first_op, second_op;
  second_op.brick_id = BrickId::Residual;
  ComputeBrick first(first_op, {Finite{}}, Backend::Scalar);
  ComputeBrick second(second_op, {Bounds{0, 1}}, Backend::Scalar, {},
                      {CheckPolicy::Cheap, OnFailure::Error, false});
  std::vector<float> mid(kInput.size()), out(kInput.size());
  const ScaleOp::Input in{kInput}, mid_in{mid};
  BrickLayer layer("layer3");
  layer.add(first, in, mid).add(second, mid_in, out);
  RecordingObserver observer;
  EXPECT_FALSE(layer.run(&observer, 3).has_value());
  EXPECT_THAT(observer.events,
              ::testing::ElementsAre("layer 3", "begin Activation", "ok Activation scale",
                                     "begin Residual", "error Residual scale", "end"));
}

TEST(BrickLayer, StopsAtTheFirstError) {
  ScaleOp failing_op;
  ComputeBrick failing(failing_op, {Bounds{0, 1}}, Backend::Scalar, {},
                       {CheckPolicy::Cheap, OnFailure::Error, false});
  ScaleOp never_op;
  ComputeBrick never(never_op, {Finite{}}, Backend::Scalar);
  std::vector<float> mid(kInput.size()), out(kInput.size());
  const ScaleOp::Input in{kInput}, mid_in{mid};
  BrickLayer layer("layer0");
  layer.add(failing, in, mid).add(never, mid_in, out);
  const auto report = layer.run();
  ASSERT_FALSE(report.has_value());
  EXPECT_TRUE(std::holds_alternative<AssertionFailed>(report.error()));
  EXPECT_TRUE(never_op.calls->empty());
}

}  // namespace
}  // namespace brick
