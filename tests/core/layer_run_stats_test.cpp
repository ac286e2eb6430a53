#include "brick/core/layer_run_stats.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/scale_op.hpp"

namespace brick {
namespace {

using test::ScaleOp;

RunReport report(std::string_view brick, std::uint64_t ns, std::uint64_t tokens, double bytes,
                 double budget_us, std::span<const AssertionOutcome> outcomes) {
  RunReport r;
  r.brick = brick;
  r.id = BrickId::AttentionScore;
  r.backend = Backend::Avx2;
  r.metrics = make_metrics(tokens, ns, 2.0 * bytes, bytes, budget_us);
  r.assertions = outcomes;
  return r;
}

TEST(LayerRunStats, MergesMembersByNameAndSumsHandComputedTotals) {
  AssertionOutcome passed;
  passed.name = "finite";
  passed.evaluated = true;
  AssertionOutcome failed = passed;
  failed.passed = false;
  failed.violations = 1;
  failed.first_bad_index = 3;
  AssertionOutcome skipped;
  const std::vector<AssertionOutcome> ok{passed, skipped}, bad{failed};

  LayerReport first;
  first.total_ns = 6000;
  const std::vector<RunReport> members = {report("score", 1000, 1, 4000, 2.0, ok),
                                          report("score", 3000, 1, 4000, 2.0, ok),
                                          report("down", 2000, 1, 8000, 1.0, bad)};
  first.members = members;
  LayerRunStats stats;
  stats.add(first);
  stats.add(first);

  EXPECT_EQ(stats.runs(), 2u);
  EXPECT_EQ(stats.total_ns(), 12000u);
  ASSERT_EQ(stats.members().size(), 2u);
  const MemberStats& score = stats.members()[0];
  EXPECT_EQ(score.name, "score");
  EXPECT_EQ(score.backend, Backend::Avx2);
  EXPECT_EQ(score.calls, 4u);
  EXPECT_EQ(score.total_ns, 8000u);
  EXPECT_EQ(score.tokens, 4u);
  EXPECT_DOUBLE_EQ(score.us_per_token(), 2.0);
  EXPECT_DOUBLE_EQ(score.tokens_per_second(), 500000.0);
  EXPECT_DOUBLE_EQ(score.gb_per_second(), 16000.0 / 8000.0);
  EXPECT_DOUBLE_EQ(score.gflops_per_second(), 32000.0 / 8000.0);
  EXPECT_DOUBLE_EQ(score.budget_us_per_token(), 2.0);
  EXPECT_DOUBLE_EQ(score.utilisation(), 1.0);
  EXPECT_EQ(score.assertions_checked, 4u) << "skipped assertions are not counted";
  EXPECT_EQ(score.assertions_failed, 0u);

  const MemberStats& down = stats.members()[1];
  EXPECT_DOUBLE_EQ(down.utilisation(), 2.0);
  EXPECT_EQ(down.assertions_failed, 2u);
  EXPECT_NE(down.first_failure.find("first at [3]"), std::string::npos);
}

TEST(LayerRunStats, CollectsARealLayer) {
  ComputeBrick a(ScaleOp{}, {Finite{}}, Backend::Scalar);
  const std::vector<float> in = {1, 2, 3};
  std::vector<float> out(3);
  const ScaleOp::Input input{in};
  BrickLayer layer("l");
  layer.add(a, input, out);
  LayerRunStats stats;
  for (int i = 0; i < 5; ++i) stats.add(*layer.run());
  ASSERT_EQ(stats.members().size(), 1u);
  EXPECT_EQ(stats.members()[0].calls, 5u);
  EXPECT_EQ(stats.members()[0].tokens, 5u);
  EXPECT_EQ(stats.members()[0].assertions_checked, 5u);
  EXPECT_DOUBLE_EQ(stats.members()[0].flops, 15.0);
}

}  // namespace
}  // namespace brick
