#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/sequential_batch_orderer.hpp"

namespace brick {
namespace {

using Steps = std::vector<std::size_t>;

TEST(SequentialBatchOrderer, Vectors) {
  EXPECT_EQ(SequentialBatchOrderer(5, BatchOrder::InOrder).sequence(), (Steps{0, 1, 2, 3, 4}));
  EXPECT_EQ(SequentialBatchOrderer(5, BatchOrder::Reversed).sequence(), (Steps{4, 3, 2, 1, 0}));
  EXPECT_EQ(SequentialBatchOrderer(5, BatchOrder::Interleaved).sequence(), (Steps{0, 4, 1, 3, 2}));
  EXPECT_EQ(SequentialBatchOrderer(6, BatchOrder::Interleaved).sequence(), (Steps{0, 5, 1, 4, 2, 3}));
  EXPECT_EQ(SequentialBatchOrderer(1, BatchOrder::Interleaved).sequence(), (Steps{0}));
  EXPECT_TRUE(SequentialBatchOrderer(0, BatchOrder::Reversed).sequence().empty());
}

TEST(SequentialBatchOrderer, EveryOrderIsAPermutation) {
  for (BatchOrder order : {BatchOrder::InOrder, BatchOrder::Reversed, BatchOrder::Interleaved}) {
    for (std::size_t n = 0; n <= 100; ++n) {
      Steps steps = SequentialBatchOrderer(n, order).sequence();
      ASSERT_EQ(steps.size(), n);
      std::sort(steps.begin(), steps.end());
      Steps identity(n);
      std::iota(identity.begin(), identity.end(), std::size_t{0});
      ASSERT_EQ(steps, identity) << "n=" << n;
    }
  }
}

TEST(SequentialBatchOrderer, InterleavedAlternatesLowestAndHighestRemaining) {
  const SequentialBatchOrderer orderer(9, BatchOrder::Interleaved);
  std::size_t low = 0, high = 8;
  for (std::size_t step = 0; step < 9; ++step) {
    EXPECT_EQ(orderer.at(step), step % 2 == 0 ? low++ : high--) << "step " << step;
  }
}

TEST(SequentialBatchOrderer, StepOutsideTheBatchesIsInvalid) {
  EXPECT_THROW(SequentialBatchOrderer(3, BatchOrder::InOrder).at(3), InvalidArgument);
  EXPECT_THROW(SequentialBatchOrderer(0, BatchOrder::Interleaved).at(0), InvalidArgument);
}

}  // namespace
}  // namespace brick
