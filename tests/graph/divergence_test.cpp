#include "brick/graph/divergence.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

// A run of `layers` layers of three kernels over `tokens` tokens; `change(kernel, layer, token,
// values)` may alter an output before it is recorded.
template <class Change>
ChecksumLog run(int layers, int tokens, Change change) {
  ChecksumLog log;
  for (int token = 0; token < tokens; ++token) {
    for (int layer = 0; layer < layers; ++layer) {
      for (const char* kernel : {"norm", "matvec", "residual"}) {
        const std::string name = fmt::format("blk.{}.{}", layer, kernel);
        std::vector<float> values(64);
        for (std::size_t i = 0; i < values.size(); ++i) {
          values[i] = std::sin(static_cast<float>(i + 7 * token + 13 * layer)) * (1.0f + static_cast<float>(layer));
        }
        change(name, layer, token, values);
        log.record(name, layer, token, values);
      }
    }
  }
  return log;
}

ChecksumLog clean(int layers = 4, int tokens = 5) {
  return run(layers, tokens, [](const std::string&, int, int, std::vector<float>&) {});
}

// Adds `offset` to every value of one kernel at one (layer, token), as the fault hook does.
ChecksumLog faulty(const std::string& kernel, int layer, int token, float offset) {
  return run(4, 5, [&](const std::string& name, int l, int t, std::vector<float>& values) {
    if (name == kernel && l == layer && t == token) {
      for (float& v : values) v += offset;
    }
  });
}

// Every value moved by a relative `noise`, as another summation order would.
ChecksumLog noisy(float noise) {
  return run(4, 5, [&](const std::string&, int, int, std::vector<float>& values) {
    for (float& v : values) v *= 1.0f + noise;
  });
}

TEST(FindDivergence, IdenticalRunsAgreeInBothModes) {
  for (const CompareMode mode : {CompareMode::Exact, CompareMode::Tolerance}) {
    const DivergenceReport report = find_divergence(clean(), clean(), mode);
    EXPECT_FALSE(report.diverged()) << name(mode);
    EXPECT_EQ(report.compared, 4u * 3u * 5u);
    EXPECT_EQ(report.divergent, 0u);
    EXPECT_NE(report.to_text().find("no divergence in 60 kernels compared"), std::string::npos) << report.to_text();
  }
}

TEST(FindDivergence, NamesExactlyTheInjectedFaultInBothModes) {
  for (const CompareMode mode : {CompareMode::Exact, CompareMode::Tolerance}) {
    for (const auto& [kernel, layer, token] :
         {std::tuple{"blk.2.matvec", 2, 3}, std::tuple{"blk.0.norm", 0, 0}, std::tuple{"blk.3.residual", 3, 4}}) {
      const DivergenceReport report = find_divergence(clean(), faulty(kernel, layer, token, 0.5f), mode);
      ASSERT_TRUE(report.first) << name(mode) << " " << kernel;
      EXPECT_EQ(report.first->key, (ChecksumKey{kernel, layer, token, 0})) << name(mode);
      EXPECT_EQ(report.divergent, 1u);
      EXPECT_NE(report.first->reference_hash, report.first->candidate_hash);
      EXPECT_NEAR(report.first->candidate.sum - report.first->reference.sum, 0.5 * 64, 1e-3);
      EXPECT_GT(report.first->difference, kDefaultTolerance);
      EXPECT_TRUE(report.only_in_reference.empty());
      EXPECT_TRUE(report.only_in_candidate.empty());
    }
  }
}

TEST(FindDivergence, ReportsTheFirstOfSeveralInExecutionOrder) {
  ChecksumLog candidate = run(4, 5, [](const std::string& name, int layer, int token, std::vector<float>& values) {
    if ((name == "blk.3.norm" && token == 1) || (name == "blk.1.residual" && token == 2)) values[0] += 10.0f;
    (void)layer;
  });
  const DivergenceReport report = find_divergence(clean(), candidate, CompareMode::Exact);
  ASSERT_TRUE(report.first);
  EXPECT_EQ(report.first->key.kernel, "blk.3.norm");
  EXPECT_EQ(report.first->key.position, 1);
  EXPECT_EQ(report.divergent, 2u);
}

TEST(FindDivergence, ToleranceModeAcceptsSummationNoiseThatExactModeDoesNot) {
  const ChecksumLog candidate = noisy(1e-6f);
  EXPECT_FALSE(find_divergence(clean(), candidate, CompareMode::Tolerance).diverged());
  const DivergenceReport exact = find_divergence(clean(), candidate, CompareMode::Exact);
  ASSERT_TRUE(exact.first);
  EXPECT_EQ(exact.first->index, 0u);
  EXPECT_TRUE(find_divergence(clean(), noisy(5e-2f), CompareMode::Tolerance).diverged());
  EXPECT_FALSE(find_divergence(clean(), noisy(5e-2f), CompareMode::Tolerance, 0.1).diverged());
}

TEST(FindDivergence, ListsKernelsOnlyOneSideHas) {
  ChecksumLog extra = clean();
  extra.record("blk.9.new_kernel", 9, 0, std::vector<float>{1.0f});
  const DivergenceReport more = find_divergence(clean(), extra, CompareMode::Exact);
  EXPECT_TRUE(more.diverged());
  EXPECT_FALSE(more.first);
  EXPECT_EQ(more.only_in_candidate, (std::vector<ChecksumKey>{{"blk.9.new_kernel", 9, 0, 0}}));
  EXPECT_TRUE(more.only_in_reference.empty());

  const DivergenceReport fewer = find_divergence(clean(4, 5), clean(4, 4), CompareMode::Tolerance);
  EXPECT_EQ(fewer.only_in_reference.size(), 12u);  // the fifth token's 4 x 3 kernels
  EXPECT_EQ(fewer.only_in_reference.front(), (ChecksumKey{"blk.0.norm", 0, 4, 0}));
  EXPECT_EQ(fewer.compared, 48u);
  const std::string text = fewer.to_text();
  EXPECT_NE(text.find("12 kernels only in the reference"), std::string::npos) << text;
  EXPECT_NE(text.find("... and 7 more"), std::string::npos) << text;
}

TEST(FindDivergence, TheJsonReportHasTheNumbersOfBothSides) {
  const DivergenceReport report = find_divergence(clean(), faulty("blk.1.matvec", 1, 2, 1.0f), CompareMode::Tolerance);
  const auto json = nlohmann::json::parse(report.to_json());
  EXPECT_EQ(json["mode"], "tolerance");
  EXPECT_EQ(json["diverged"], true);
  EXPECT_EQ(json["first"]["key"]["kernel"], "blk.1.matvec");
  EXPECT_EQ(json["first"]["key"]["layer"], 1);
  EXPECT_EQ(json["first"]["key"]["token"], 2);
  EXPECT_EQ(json["first"]["reference"]["hash"].get<std::string>().size(), 18u);
  EXPECT_EQ(json["first"]["candidate"]["summary"]["count"], 64);
  EXPECT_GT(json["first"]["difference"].get<double>(), 0.0);
  EXPECT_EQ(json["compared"], 60);
  const std::string text = report.to_text();
  EXPECT_NE(text.find("first divergence (tolerance 0.02): blk.1.matvec (layer 1, token 2)"), std::string::npos)
      << text;
}

TEST(SummaryDifference, IsZeroForEqualSummariesAndInfiniteForOtherCounts) {
  const NumericSummary a = summarize(std::vector<float>{1.0f, 2.0f, 3.0f});
  EXPECT_EQ(summary_difference(a, a), 0.0);
  EXPECT_TRUE(std::isinf(summary_difference(a, summarize(std::vector<float>{1.0f, 2.0f}))));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isinf(summary_difference(a, summarize(std::vector<float>{1.0f, 2.0f, nan}))));
  // Values that cancel: the sum is measured against their size, not against the sum itself.
  const NumericSummary cancel = summarize(std::vector<float>{1.0f, -1.0f});
  const NumericSummary nearly = summarize(std::vector<float>{1.0f, -1.0f + 1e-6f});
  EXPECT_LT(summary_difference(cancel, nearly), 1e-5);
  // One extreme value moved by 5% of the range: the moments barely move, and min and max are not
  // compared.
  std::vector<float> values(256);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i));
  std::vector<float> moved = values;
  *std::max_element(moved.begin(), moved.end()) += 0.05f;
  EXPECT_LT(summary_difference(summarize(values), summarize(moved)), 1e-3);
}

TEST(FindDivergence, RefusesABadToleranceOrMode) {
  EXPECT_THROW(find_divergence(clean(), clean(), CompareMode::Tolerance, -1.0), InvalidArgument);
  EXPECT_THROW(find_divergence(clean(), clean(), CompareMode::Tolerance, std::nan("")), InvalidArgument);
  EXPECT_THROW(find_divergence(clean(), clean(), static_cast<CompareMode>(5)), InvalidArgument);
  EXPECT_EQ(parse_compare_mode("Exact"), CompareMode::Exact);
  EXPECT_EQ(parse_compare_mode("tolerance"), CompareMode::Tolerance);
  EXPECT_FALSE(parse_compare_mode("bits"));
}

}  // namespace
}  // namespace brick::graph
