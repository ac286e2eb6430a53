// Every float op as a ComputeBrick: the standard assertions pass on every backend, and an
// Equivalence assertion that should fail does, with the right numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/error.hpp"
#include "brick/ops/activation.hpp"
#include "brick/ops/dot.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/make_brick.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/ops/softmax.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

// A transformer-layer-sized set of inputs for every op.
struct LayerData {
  static constexpr std::size_t kHidden = 1000;  // not a multiple of any vector width
  static constexpr std::size_t kRows = 67;
  std::vector<float> x = brick::test::normal(kHidden, 1);
  std::vector<float> y = brick::test::normal(kHidden, 2);
  std::vector<float> weight = brick::test::uniform(kHidden, 3, 0.5f, 1.5f);
  std::vector<float> matrix = brick::test::normal(kRows * kHidden, 4, 0.0f, 0.05f);
  std::vector<float> scores = [] {
    std::vector<float> s = brick::test::normal(kHidden, 5, 0.0f, 3.0f);
    for (std::size_t i = kHidden / 2; i < kHidden; ++i) s[i] = -INFINITY;  // causal mask
    return s;
  }();
};

// verify() runs every assertion; the standard ones are Equivalence and Finite.
template <class Op>
void expect_verified(Op op, const typename Op::Input& input, Backend backend) {
  auto brick = make_brick(std::move(op), backend);
  ASSERT_EQ(brick.assertions().size(), 2u);
  const VerifyReport report = brick.verify(input);
  ASSERT_EQ(report.assertions.size(), 2u);
  for (const AssertionOutcome& outcome : report.assertions) {
    EXPECT_TRUE(outcome.evaluated) << brick.name() << ": " << outcome.name;
    EXPECT_TRUE(outcome.passed) << brick.name() << " on " << name(backend) << ": " << outcome.name
                                << ": " << outcome.summary();
  }
  std::vector<float> out(brick.op().output_size(input));
  const auto result = brick.run(input, out);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->passed());
  EXPECT_EQ(result->backend, backend);
}

class OpBricks : public BackendTest {};

TEST_P(OpBricks, StandardAssertionsPass) {
  const LayerData d;
  expect_verified(DotOp{}, {d.x, d.y}, backend());
  expect_verified(AddOp{}, {d.x, d.y}, backend());
  expect_verified(RmsNormOp{}, {d.x, d.weight, 1e-5f}, backend());
  expect_verified(SoftmaxOp{}, {d.scores}, backend());
  expect_verified(SiluOp{}, {d.x}, backend());
  expect_verified(SwigluOp{}, {d.x, d.y}, backend());
  expect_verified(RopeOp{}, {d.x, RopeParams{100, 77, 10000.0f, RopeLayout::Normal}}, backend());
  expect_verified(RopeOp{}, {d.x, RopeParams{40, 4000, 500000.0f, RopeLayout::NeoX}}, backend());
  expect_verified(MatvecOp{BrickId::DownProjection},
                  {d.matrix, LayerData::kRows, LayerData::kHidden, d.x}, backend());
}

class SimdBricks : public BackendTest {};

TEST_P(SimdBricks, EquivalenceWithZeroToleranceReportsTheTrueDifferences) {
  // The vectorised exp is not libm's expf, so with no tolerance silu's Equivalence must fail, and
  // its numbers must be the ones computed here independently.
  const std::vector<float> x = brick::test::uniform(4097, 11, -20.0f, 20.0f);
  ComputeBrick<SiluOp> brick(SiluOp{}, {Equivalence{Backend::Scalar, 0.0, 0.0}}, backend());
  const VerifyReport report = brick.verify({x});
  ASSERT_EQ(report.assertions.size(), 1u);
  const AssertionOutcome& outcome = report.assertions[0];

  std::vector<float> actual(x.size());
  std::vector<float> reference(x.size());
  silu(x, actual, backend());
  silu(x, reference, Backend::Scalar);
  std::size_t violations = 0;
  std::optional<std::size_t> first_bad;
  double max_abs = 0.0;
  std::uint64_t max_ulp = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (actual[i] == reference[i]) continue;
    ++violations;
    if (!first_bad) first_bad = i;
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(actual[i]) - reference[i]));
    max_ulp = std::max(max_ulp, ulp_distance(actual[i], reference[i]));
  }
  ASSERT_GT(violations, 0u) << "the vectorised exp happens to equal libm everywhere";
  EXPECT_FALSE(outcome.passed);
  EXPECT_EQ(outcome.violations, violations);
  EXPECT_EQ(outcome.first_bad_index, first_bad);
  EXPECT_EQ(outcome.first_bad_value, actual[*first_bad]);
  EXPECT_EQ(outcome.first_bad_expected, reference[*first_bad]);
  EXPECT_DOUBLE_EQ(outcome.max_abs_error, max_abs);
  EXPECT_EQ(outcome.max_ulp, max_ulp);
  EXPECT_LE(max_ulp, 8u);  // and the standard tolerance covers it
  EXPECT_TRUE(make_brick(SiluOp{}, backend()).verify({x}).passed());
}

// AddOp with a planted bug: every backend but Scalar adds 0.5 to element 3.
struct BrokenAddOp : AddOp {
  BrokenAddOp() : AddOp(BrickId::Residual, "broken_add") {}
  void run(const Input& input, std::span<float> out, Backend backend) const {
    AddOp::run(input, out, backend);
    if (backend != Backend::Scalar) out[3] += 0.5f;
  }
};

TEST_P(OpBricks, APlantedBugIsCaughtWithTheRightNumbers) {
  const std::vector<float> a(16, 1.0f);
  const std::vector<float> b(16, 2.0f);
  auto brick = make_brick(BrokenAddOp{}, backend());
  const VerifyReport report = brick.verify({a, b});
  const AssertionOutcome& equivalence = report.assertions[0];
  EXPECT_EQ(equivalence.kind, AssertionKind::Equivalence);
  if (backend() == Backend::Scalar) {
    EXPECT_TRUE(report.passed());
    return;
  }
  EXPECT_FALSE(report.passed());
  EXPECT_FALSE(equivalence.passed);
  EXPECT_EQ(equivalence.violations, 1u);
  EXPECT_EQ(equivalence.first_bad_index, std::optional<std::size_t>{3});
  EXPECT_EQ(equivalence.first_bad_value, 3.5f);
  EXPECT_EQ(equivalence.first_bad_expected, 3.0f);
  EXPECT_DOUBLE_EQ(equivalence.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(equivalence.max_rel_error, 0.5 / 3.0);
  EXPECT_EQ(equivalence.max_ulp, ulp_distance(3.5f, 3.0f));
  EXPECT_TRUE(report.assertions[1].passed);  // still finite

  // Under the Error policy with every check on, run() returns the numbers as a typed failure.
  brick.set_policy(BrickPolicy{CheckPolicy::All, OnFailure::Error});
  std::vector<float> out(16);
  const auto result = brick.run({a, b}, out);
  ASSERT_FALSE(result.has_value());
  const auto* failed = std::get_if<AssertionFailed>(&result.error());
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->outcome.first_bad_index, std::optional<std::size_t>{3});
  EXPECT_DOUBLE_EQ(failed->outcome.max_abs_error, 0.5);
}

BRICK_OPS_INSTANTIATE(OpBricks, test::kAllBackends);
BRICK_OPS_INSTANTIATE(SimdBricks, test::kSimdBackends);

TEST(OpBricks, NamesAndIds) {
  EXPECT_EQ(make_brick(RmsNormOp{}, Backend::Scalar).name(), "rms_norm");
  EXPECT_EQ(make_brick(RmsNormOp{}, Backend::Scalar).id(), BrickId::RmsNorm);
  EXPECT_EQ(make_brick(RmsNormOp{BrickId::RmsNorm, "ffn_norm"}, Backend::Scalar).name(),
            "ffn_norm");
  EXPECT_EQ(make_brick(MatvecOp{BrickId::OutputProjection}, Backend::Scalar).name(),
            "matvec.OutputProjection");
  EXPECT_EQ(make_brick(MatvecOp{BrickId::QkvProjection, "wq"}, Backend::Scalar).id(),
            BrickId::QkvProjection);
  EXPECT_EQ(SoftmaxOp{}.id(), BrickId::AttentionSoftmax);
  EXPECT_EQ(RopeOp{}.id(), BrickId::RopeEmbedding);
  EXPECT_EQ(SwigluOp{}.id(), BrickId::Activation);
  EXPECT_EQ(AddOp{}.id(), BrickId::Residual);
}

TEST(OpBricks, CostsCountTheRealWork) {
  const std::vector<float> v(4096);
  const std::vector<float> m(2048 * 4096);
  EXPECT_EQ(DotOp{}.cost({v, v}).flops, 2.0 * 4096);
  EXPECT_EQ(DotOp{}.cost({v, v}).bytes, 8.0 * 4096 + 4);
  const OpCost matvec = MatvecOp{BrickId::UpProjection}.cost({m, 2048, 4096, v});
  EXPECT_EQ(matvec.tokens, 1u);
  EXPECT_EQ(matvec.flops, 2.0 * 2048 * 4096);
  EXPECT_EQ(matvec.bytes, 4.0 * (2048.0 * 4096 + 4096 + 2048));
  EXPECT_NEAR(matvec.arithmetic_intensity(), 0.5, 1e-3);  // f32 matvec: 2 FLOPs per 4-byte weight
  EXPECT_EQ(RmsNormOp{}.cost({v, v, 1e-6f}).bytes, 12.0 * 4096);
  EXPECT_EQ(AddOp{}.cost({v, v}).bytes, 12.0 * 4096);
  EXPECT_EQ(SwigluOp{}.cost({v, v}).bytes, 12.0 * 4096);
  EXPECT_EQ(SoftmaxOp{}.cost({v}).bytes, 8.0 * 4096);
  EXPECT_EQ(RopeOp{}.cost({v, RopeParams{128, 5}}).flops, 3.0 * 4096 + 2.0 * 64);
}

TEST(OpBricks, WrongOutputSizeIsATypedError) {
  const std::vector<float> v(8, 1.0f);
  std::vector<float> out(7);
  auto brick = make_brick(AddOp{}, Backend::Scalar);
  EXPECT_THROW((void)brick.run({v, v}, out), InvalidArgument);
  auto dot_brick = make_brick(DotOp{}, Backend::Scalar);
  EXPECT_THROW((void)dot_brick.run({v, v}, out), InvalidArgument);
}

}  // namespace
}  // namespace brick::ops
