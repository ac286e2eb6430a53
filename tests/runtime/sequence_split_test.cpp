#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/batch/sequence_split.hpp"

namespace brick {
namespace {

using Lengths = std::vector<std::size_t>;

// Each sequence appears exactly once, indices ascending per worker, token sums consistent.
void expect_valid_partition(const SequenceSplit& split, const Lengths& lengths, std::size_t workers) {
  ASSERT_EQ(split.workers(), workers);
  ASSERT_EQ(split.tokens.size(), workers);
  std::vector<int> seen(lengths.size(), 0);
  for (std::size_t w = 0; w < workers; ++w) {
    ASSERT_TRUE(std::is_sorted(split.sequences[w].begin(), split.sequences[w].end()));
    std::size_t sum = 0;
    for (std::size_t s : split.sequences[w]) {
      ASSERT_LT(s, lengths.size());
      ++seen[s];
      sum += lengths[s];
    }
    ASSERT_EQ(split.tokens[w], sum) << "worker " << w;
  }
  for (std::size_t s = 0; s < lengths.size(); ++s) ASSERT_EQ(seen[s], 1) << "sequence " << s;
}

// The best possible largest sum, by trying every assignment (small cases only).
std::size_t brute_force_optimum(const Lengths& lengths, std::size_t workers) {
  std::size_t best = SIZE_MAX;
  std::vector<std::size_t> assignment(lengths.size(), 0);
  while (true) {
    std::vector<std::size_t> sums(workers, 0);
    for (std::size_t s = 0; s < lengths.size(); ++s) sums[assignment[s]] += lengths[s];
    best = std::min(best, *std::max_element(sums.begin(), sums.end()));
    std::size_t digit = 0;
    while (digit < assignment.size() && ++assignment[digit] == workers) assignment[digit++] = 0;
    if (digit == assignment.size()) return best;
  }
}

TEST(SplitByCount, UsesBalance211OverSequences) {
  const Lengths lengths = {5, 1, 9, 2, 7, 3, 4, 8, 6, 10};
  const SequenceSplit split = split_by_count(lengths, 3);
  expect_valid_partition(split, lengths, 3);
  EXPECT_EQ(split.sequences[0], (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(split.sequences[1], (std::vector<std::size_t>{4, 5, 6}));
  EXPECT_EQ(split.sequences[2], (std::vector<std::size_t>{7, 8, 9}));
  EXPECT_EQ(split.tokens, (std::vector<std::size_t>{17, 14, 24}));
  EXPECT_EQ(split.max_tokens(), 24u);
}

TEST(SplitByCount, MoreWorkersThanSequencesLeavesSomeIdle) {
  const Lengths lengths = {3, 4};
  const SequenceSplit split = split_by_count(lengths, 4);
  expect_valid_partition(split, lengths, 4);
  EXPECT_TRUE(split.sequences[2].empty());
  EXPECT_TRUE(split.sequences[3].empty());
  EXPECT_EQ(split_by_count({}, 2).max_tokens(), 0u);
}

TEST(SplitByTokens, LongestFirstToTheLightestWorker) {
  const Lengths lengths = {5, 1, 9, 2, 7, 3, 4, 8, 6, 10};
  const SequenceSplit split = split_by_tokens(lengths, 3);
  expect_valid_partition(split, lengths, 3);
  // 10->w0, 9->w1, 8->w2, 7->w2, 6->w1, 5->w0 (sums 15,15,15), 4->w0, 3->w1, 2->w2, 1->w2.
  EXPECT_EQ(split.tokens, (std::vector<std::size_t>{19, 18, 18}));
  EXPECT_EQ(split.max_tokens(), 19u);  // total 55 over 3: the lower bound is 19, so optimal
  EXPECT_LT(split.max_tokens(), split_by_count(lengths, 3).max_tokens());
}

TEST(SplitByTokens, GrahamWorstCaseMeetsTheBoundExactly) {
  // m = 2, lengths {3,3,2,2,2}: OPT = 6 ({3,3},{2,2,2}), LPT = 7 = (4/3 - 1/6) * 6.
  const Lengths lengths = {3, 3, 2, 2, 2};
  const SequenceSplit split = split_by_tokens(lengths, 2);
  expect_valid_partition(split, lengths, 2);
  EXPECT_EQ(split.max_tokens(), 7u);
  EXPECT_EQ(brute_force_optimum(lengths, 2), 6u);
}

TEST(SplitByTokens, WithinTheLptBoundOfTheBruteForceOptimum) {
  std::mt19937_64 rng(20261129);
  int cases = 0;
  for (std::size_t workers = 1; workers <= 4; ++workers) {
    for (std::size_t n = 0; n <= 8; ++n) {
      for (int trial = 0; trial < 25; ++trial) {
        Lengths lengths(n);
        const std::size_t max_len = trial % 2 == 0 ? 10 : 1000;
        for (auto& len : lengths) len = std::uniform_int_distribution<std::size_t>(0, max_len)(rng);
        const SequenceSplit split = split_by_tokens(lengths, workers);
        expect_valid_partition(split, lengths, workers);
        const std::size_t opt = brute_force_optimum(lengths, workers);
        const std::size_t lpt = split.max_tokens();
        const std::size_t total = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
        const std::size_t longest = n == 0 ? 0 : *std::max_element(lengths.begin(), lengths.end());
        ASSERT_GE(lpt, opt);
        // lpt <= (4/3 - 1/(3m)) opt  <=>  3m * lpt <= (4m - 1) * opt, in integers.
        ASSERT_LE(3 * workers * lpt, (4 * workers - 1) * opt) << "workers " << workers << " n " << n;
        ASSERT_GE(lpt, std::max((total + workers - 1) / workers, longest));
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 4 * 9 * 25);
}

TEST(SplitByTokens, DeterministicAndTiesGoToTheLowerIndex) {
  const Lengths lengths = {4, 4, 4, 4};
  const SequenceSplit split = split_by_tokens(lengths, 2);
  EXPECT_EQ(split.sequences[0], (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(split.sequences[1], (std::vector<std::size_t>{1, 3}));
  Lengths big(500);
  std::mt19937_64 rng(7);
  for (auto& len : big) len = rng() % 4096;
  const SequenceSplit a = split_by_tokens(big, 7);
  const SequenceSplit b = split_by_tokens(big, 7);
  EXPECT_EQ(a.sequences, b.sequences);
  expect_valid_partition(a, big, 7);
}

TEST(SequenceSplit, ZeroWorkersIsInvalid) {
  const Lengths lengths = {1, 2};
  EXPECT_THROW(split_by_count(lengths, 0), InvalidArgument);
  EXPECT_THROW(split_by_tokens(lengths, 0), InvalidArgument);
}

// Token sums used to wrap, reporting a worker with SIZE_MAX + 1 tokens as having none.
TEST(SequenceSplit, ATokenSumThatOverflowsIsInvalid) {
  const Lengths lengths = {SIZE_MAX, 1, 5};
  EXPECT_THROW(split_by_count(lengths, 1), InvalidArgument);
  EXPECT_THROW(split_by_tokens(lengths, 1), InvalidArgument);
  EXPECT_EQ(split_by_tokens(lengths, 2).max_tokens(), SIZE_MAX);
}

}  // namespace
}  // namespace brick
