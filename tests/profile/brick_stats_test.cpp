#include "brick/profile/brick_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "brick/core/error.hpp"

namespace brick {
namespace {

TEST(BrickStats, EveryStatisticMatchesHandComputedValues) {
  BrickStats stats;
  for (const std::uint64_t ns : {100u, 200u, 300u, 400u}) stats.add(ns, 2, 1000, 500);
  EXPECT_EQ(stats.count, 4u);
  EXPECT_EQ(stats.total_ns, 1000u);
  EXPECT_EQ(stats.min_ns, 100u);
  EXPECT_EQ(stats.max_ns, 400u);
  EXPECT_EQ(stats.elements, 8u);
  EXPECT_EQ(stats.bytes, 4000u);
  EXPECT_EQ(stats.flops, 2000u);
  EXPECT_DOUBLE_EQ(stats.mean_ns(), 250.0);
  // Deviations -150, -50, 50, 150: (22500 + 2500 + 2500 + 22500) / 4.
  EXPECT_DOUBLE_EQ(stats.variance_ns2(), 12500.0);
  EXPECT_DOUBLE_EQ(stats.stddev_ns(), std::sqrt(12500.0));
  EXPECT_DOUBLE_EQ(stats.us_per_token(), 1000.0 / 1e3 / 8.0);  // 1 us over 8 tokens
  EXPECT_DOUBLE_EQ(stats.tokens_per_second(), 8e6);
  EXPECT_DOUBLE_EQ(stats.gb_per_second(), 4.0);      // 4000 bytes in 1000 ns
  EXPECT_DOUBLE_EQ(stats.gflop_per_second(), 2.0);   // 2000 flops in 1000 ns
  EXPECT_NEAR(static_cast<double>(stats.percentile_ns(0.5)), 200.0, 200.0 / 64);
  EXPECT_EQ(stats.percentile_ns(0.0), 100u);
  EXPECT_EQ(stats.percentile_ns(1.0), 400u);
}

TEST(BrickStats, EmptyStatsAreAllZero) {
  const BrickStats stats;
  EXPECT_EQ(stats.min_ns, 0u);
  EXPECT_EQ(stats.mean_ns(), 0.0);
  EXPECT_EQ(stats.variance_ns2(), 0.0);
  EXPECT_EQ(stats.percentile_ns(0.99), 0u);
  EXPECT_EQ(stats.us_per_token(), 0.0);
  EXPECT_EQ(stats.tokens_per_second(), 0.0);
  EXPECT_EQ(stats.gb_per_second(), 0.0);
  EXPECT_EQ(stats.gflop_per_second(), 0.0);
}

TEST(BrickStats, MergeEqualsAddingEverySampleToOne) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::uint64_t> ns(1, 5'000'000);
  BrickStats whole, left, right, empty;
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t x = ns(rng);
    whole.add(x, 1, 3, 5);
    (i % 7 == 0 ? left : right).add(x, 1, 3, 5);
  }
  left.merge(empty);
  empty.merge(left);
  empty.merge(right);
  EXPECT_EQ(empty.count, whole.count);
  EXPECT_EQ(empty.total_ns, whole.total_ns);
  EXPECT_EQ(empty.min_ns, whole.min_ns);
  EXPECT_EQ(empty.max_ns, whole.max_ns);
  EXPECT_EQ(empty.elements, whole.elements);
  EXPECT_EQ(empty.bytes, whole.bytes);
  EXPECT_EQ(empty.flops, whole.flops);
  EXPECT_NEAR(empty.variance_ns2(), whole.variance_ns2(), whole.variance_ns2() * 1e-9);
  for (const double q : {0.5, 0.9, 0.99, 0.999}) EXPECT_EQ(empty.percentile_ns(q), whole.percentile_ns(q));
}

TEST(BrickStats, WelfordVarianceMatchesTwoPassOnLargeOffsets) {
  // Large mean, small spread: the naive sum-of-squares formula loses every digit here.
  BrickStats stats;
  double sum = 0;
  std::vector<double> xs;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t x = 10'000'000'000ull + (i * 7919) % 1000;
    stats.add(x, 0, 0, 0);
    xs.push_back(static_cast<double>(x));
    sum += static_cast<double>(x);
  }
  const double mean = sum / 1000;
  double m2 = 0;
  for (const double x : xs) m2 += (x - mean) * (x - mean);
  EXPECT_NEAR(stats.variance_ns2(), m2 / 1000, m2 / 1000 * 1e-6);
}

TEST(BrickStats, PercentileOutsideZeroToOneIsInvalidArgument) {
  BrickStats stats;
  stats.add(10, 1, 0, 0);
  EXPECT_THROW((void)stats.percentile_ns(-0.1), InvalidArgument);
  EXPECT_THROW((void)stats.percentile_ns(1.5), InvalidArgument);
  EXPECT_THROW((void)stats.percentile_ns(std::numeric_limits<double>::quiet_NaN()), InvalidArgument);
}

}  // namespace
}  // namespace brick
