// The sampler: greedy is the first highest logit, the repetition penalty follows llama.cpp's rule,
// a seed fixes the draws, and top-k / top-p / min-p only ever keep the most probable tokens.
#include "brick/model/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

TEST(Sampler, GreedyTakesTheFirstHighestLogitAndSkipsNaN) {
  Sampler sampler({}, 5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> logits = {nan, 1.0f, 3.0f, 3.0f, -2.0f};
  EXPECT_EQ(sampler.sample(logits, {}), 2);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplingParams params;
  params.repeat_penalty = 2.0f;
  Sampler sampler(params, 3);
  const std::vector<float> logits = {3.0f, 2.0f, -1.0f};
  const std::vector<TokenId> history = {0, 0, 0};  // penalised once: 3 -> 1.5 < 2
  EXPECT_EQ(sampler.sample(logits, history), 1);
  const std::vector<TokenId> both = {0, 1};  // 1.5 vs 1.0
  EXPECT_EQ(sampler.sample(logits, both), 0);
}

TEST(Sampler, SameSeedSameDrawsAndOnlyLikelyTokens) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_k = 3;
  params.seed = 7;
  std::vector<float> logits(100, -10.0f);
  logits[10] = 2.0f;
  logits[20] = 1.5f;
  logits[30] = 1.0f;
  logits[40] = 0.9f;  // fourth: top-k 3 removes it
  Sampler a(params, logits.size()), b(params, logits.size());
  std::set<TokenId> seen;
  for (int i = 0; i < 200; ++i) {
    const TokenId x = a.sample(logits, {});
    EXPECT_EQ(x, b.sample(logits, {}));
    seen.insert(x);
  }
  EXPECT_EQ(seen, (std::set<TokenId>{10, 20, 30}));
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTopProbability) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.5f;  // keeps tokens at least half as likely as the top one
  const std::vector<float> logits = {0.0f, std::log(0.6f), std::log(0.4f)};
  Sampler sampler(params, logits.size());
  std::set<TokenId> seen;
  for (int i = 0; i < 300; ++i) seen.insert(sampler.sample(logits, {}));
  EXPECT_EQ(seen, (std::set<TokenId>{0, 1}));
}

TEST(Sampler, RejectsBadParametersAndSizes) {
  SamplingParams params;
  params.top_p = 0.0f;
  EXPECT_THROW(Sampler(params, 10), InvalidArgument);
  params = {};
  params.repeat_penalty = -1.0f;
  EXPECT_THROW(Sampler(params, 10), InvalidArgument);
  EXPECT_THROW(Sampler({}, 0), InvalidArgument);
  Sampler sampler({}, 4);
  const std::vector<float> three(3);
  EXPECT_THROW(sampler.sample(three, {}), InvalidArgument);
}

}  // namespace
}  // namespace brick::model
