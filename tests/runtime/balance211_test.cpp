#include "brick/runtime/batch/balance211.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace brick {
namespace {

std::vector<Range> split(std::size_t n, std::size_t team) {
  std::vector<Range> ranges;
  for (std::size_t tid = 0; tid < team; ++tid) ranges.push_back(balance211(n, team, tid));
  return ranges;
}

TEST(Balance211, MatchesOneDnnVectors) {
  EXPECT_EQ(split(10, 3), (std::vector<Range>{{0, 4}, {4, 7}, {7, 10}}));
  EXPECT_EQ(split(2, 4), (std::vector<Range>{{0, 1}, {1, 2}, {2, 2}, {2, 2}}));
  EXPECT_EQ(split(7, 1), (std::vector<Range>{{0, 7}}));
  for (const Range& r : split(0, 5)) EXPECT_TRUE(r.empty());
}

TEST(Balance211, RangesAreContiguousDisjointCoveringAndBalanced) {
  for (std::size_t n = 0; n <= 200; ++n) {
    for (std::size_t team = 1; team <= 17; ++team) {
      std::size_t next = 0, smallest = n, largest = 0;
      for (std::size_t tid = 0; tid < team; ++tid) {
        const Range r = balance211(n, team, tid);
        if (n > 0) {
          ASSERT_EQ(r.begin, next) << "n=" << n << " team=" << team << " tid=" << tid;
        }
        next = r.end;
        smallest = std::min(smallest, r.size());
        largest = std::max(largest, r.size());
      }
      ASSERT_EQ(next, n) << "n=" << n << " team=" << team;
      ASSERT_LE(largest - smallest, 1u) << "n=" << n << " team=" << team;
    }
  }
}

TEST(Balance211, FirstThreadsTakeTheExtraItem) {
  // 11 over 4: ceil = 3, T1 = 11 - 2*4 = 3, so sizes 3,3,3,2.
  const auto ranges = split(11, 4);
  EXPECT_EQ(ranges[0].size(), 3u);
  EXPECT_EQ(ranges[2].size(), 3u);
  EXPECT_EQ(ranges[3].size(), 2u);
}

TEST(Balance211, OutOfTeamThreadGetsNothing) {
  EXPECT_TRUE(balance211(10, 3, 3).empty());
  EXPECT_TRUE(balance211(10, 0, 0).empty());
}

}  // namespace
}  // namespace brick
