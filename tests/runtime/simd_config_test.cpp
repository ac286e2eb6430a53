#include <gtest/gtest.h>

#include <array>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/simd_config/unroll.hpp"
#include "brick/runtime/simd_config/unroll_config.hpp"

namespace brick {
namespace {

TEST(UnrollConfig, FactorPerLevelAndBackend) {
  static_assert(unroll_factor(SimdLevel::Avx512) == 8);
  static_assert(unroll_factor(SimdLevel::Avx2) == 4);
  static_assert(unroll_factor(SimdLevel::Sse) == 2);
  static_assert(unroll_factor(SimdLevel::Scalar) == 1);
  EXPECT_EQ(unroll_factor(Backend::Avx512), 8u);
  EXPECT_EQ(unroll_factor(Backend::Avx2), 4u);
  EXPECT_EQ(unroll_factor(Backend::Scalar), 1u);
  EXPECT_EQ(simd_level(Backend::Avx2), SimdLevel::Avx2);
  EXPECT_THROW(simd_level(Backend::Auto), InvalidArgument);
  EXPECT_THROW(simd_level(static_cast<Backend>(99)), InvalidArgument);
}

struct Call {
  std::size_t i, lane;
  friend bool operator==(const Call&, const Call&) = default;
};

template <std::size_t Step, std::size_t Unroll>
void check_block_coverage(std::size_t n) {
  std::vector<Call> blocks;
  std::vector<std::pair<std::size_t, std::size_t>> tails;
  unroll_blocks<Step, Unroll>(
      n, [&](std::size_t i, std::size_t lane) { blocks.push_back({i, lane}); },
      [&](std::size_t i, std::size_t count) { tails.emplace_back(i, count); });
  // Blocks: every whole Step-block in order, lane = block index mod Unroll.
  ASSERT_EQ(blocks.size(), n / Step) << "n=" << n << " step=" << Step << " unroll=" << Unroll;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    ASSERT_EQ(blocks[b], (Call{b * Step, b % Unroll})) << "n=" << n << " block " << b;
  }
  // Tail: exactly the remainder, once, and only when there is one.
  if (n % Step == 0) {
    ASSERT_TRUE(tails.empty()) << "n=" << n;
  } else {
    ASSERT_EQ(tails.size(), 1u) << "n=" << n;
    ASSERT_EQ(tails[0], std::make_pair(n - n % Step, n % Step)) << "n=" << n;
  }
  // Together they cover [0, n) exactly once.
  std::vector<int> hits(n, 0);
  for (const Call& c : blocks) {
    for (std::size_t k = 0; k < Step; ++k) ++hits[c.i + k];
  }
  for (const auto& [i, count] : tails) {
    for (std::size_t k = 0; k < count; ++k) ++hits[i + k];
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "n=" << n << " index " << i;
}

TEST(Unroll, BlocksAndTailCoverEveryIndexExactlyOnce) {
  for (std::size_t n = 0; n <= 300; ++n) {
    check_block_coverage<1, 1>(n);
    check_block_coverage<1, 8>(n);
    check_block_coverage<4, 2>(n);
    check_block_coverage<8, 4>(n);
    check_block_coverage<16, 8>(n);
    check_block_coverage<3, 5>(n);
  }
}

TEST(Unroll, ElementLoopVisitsInOrderWithLaneModuloUnroll) {
  for (std::size_t n = 0; n <= 100; ++n) {
    std::vector<Call> calls;
    unroll<4>(n, [&](std::size_t i, std::size_t lane) { calls.push_back({i, lane}); });
    ASSERT_EQ(calls.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(calls[i], (Call{i, i % 4}));
  }
  std::size_t visited = 0;
  unroll<8>(37, [&](std::size_t i) { visited += i; });  // a body may ignore the lane
  EXPECT_EQ(visited, 36u * 37u / 2u);
}

TEST(Unroll, LaneAccumulatorsGiveTheSameSumAsAPlainLoop) {
  std::vector<double> x(1001);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 17) - 3.0;
  std::array<double, 8> acc{};
  unroll<8>(x.size(), [&](std::size_t i, std::size_t lane) { acc[lane] += x[i]; });
  double unrolled = 0, plain = 0;
  for (double a : acc) unrolled += a;
  for (double v : x) plain += v;
  EXPECT_EQ(unrolled, plain);  // small integers: exact in any order
}

constexpr std::size_t constexpr_sum(std::size_t n) {
  std::size_t sum = 0;
  unroll_blocks<4, 2>(
      n, [&](std::size_t i) { sum += 4 * i + 6; },  // i + (i+1) + (i+2) + (i+3)
      [&](std::size_t i, std::size_t count) {
        for (std::size_t k = 0; k < count; ++k) sum += i + k;
      });
  return sum;
}
static_assert(constexpr_sum(0) == 0);
static_assert(constexpr_sum(101) == 100 * 101 / 2);
static_assert(constexpr_sum(64) == 63 * 64 / 2);

}  // namespace
}  // namespace brick
