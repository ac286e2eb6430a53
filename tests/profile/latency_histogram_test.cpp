#include "brick/profile/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "brick/profile/brick_stats.hpp"

namespace brick {
namespace {

// Nearest rank, the definition BrickStats::percentile_ns documents.
std::uint64_t exact_percentile(const std::vector<std::uint64_t>& sorted, double q) {
  const auto n = sorted.size();
  const auto rank = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(q * static_cast<double>(n))), 1, n);
  return sorted[rank - 1];
}

double relative_error(std::uint64_t got, std::uint64_t want) {
  return std::abs(static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

TEST(LatencyHistogram, BucketsTileTheRangeWithoutGapsOrOverlap) {
  using H = LatencyHistogram;
  std::uint64_t next_lower = 0;
  for (std::size_t bucket = 0; bucket < H::kBucketCount; ++bucket) {
    ASSERT_EQ(H::bucket_lower_ns(bucket), next_lower) << bucket;
    ASSERT_EQ(H::bucket_of(H::bucket_lower_ns(bucket)), bucket);
    ASSERT_EQ(H::bucket_of(H::bucket_lower_ns(bucket) + H::bucket_width_ns(bucket) - 1), bucket);
    next_lower = H::bucket_lower_ns(bucket) + H::bucket_width_ns(bucket);
  }
  EXPECT_EQ(next_lower, std::uint64_t{1} << (H::kMaxExponent + 1));
  EXPECT_EQ(H::bucket_of(UINT64_MAX), H::kBucketCount - 1);
}

TEST(LatencyHistogram, BucketValueIsWithinOnePointSixPercentFromOneNsToOneHundredSeconds) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(0.0, 11.0);
  for (int i = 0; i < 200000; ++i) {
    const auto ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::pow(10.0, exponent(rng))));
    const auto value = LatencyHistogram::bucket_value_ns(LatencyHistogram::bucket_of(ns));
    ASSERT_LE(relative_error(value, ns), 1.0 / 64) << ns;
  }
  for (std::uint64_t ns = 0; ns < 64; ++ns) EXPECT_EQ(LatencyHistogram::bucket_value_ns(LatencyHistogram::bucket_of(ns)), ns);
}

TEST(LatencyHistogram, PercentilesMatchExactSortedSamplesWithinThreePercent) {
  std::mt19937_64 rng(42);
  for (const int n : {1, 2, 7, 100, 1001, 50000}) {
    // Log-uniform over 1 ns .. 100 s, plus a cluster, so every percentile lands somewhere different.
    std::uniform_real_distribution<double> exponent(0.0, 11.0);
    std::lognormal_distribution<double> cluster(std::log(20000.0), 0.3);
    BrickStats stats;
    std::vector<std::uint64_t> samples;
    for (int i = 0; i < n; ++i) {
      const double x = (i % 3 == 0) ? cluster(rng) : std::pow(10.0, exponent(rng));
      const auto ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(x));
      samples.push_back(ns);
      stats.add(ns, 1, 0, 0);
    }
    std::sort(samples.begin(), samples.end());
    for (const double q : {0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      const auto want = exact_percentile(samples, q);
      EXPECT_LE(relative_error(stats.percentile_ns(q), want), 0.03) << "n=" << n << " q=" << q;
      EXPECT_LE(relative_error(stats.percentile_ns(q), want), 1.0 / 64) << "n=" << n << " q=" << q;
    }
    EXPECT_EQ(stats.percentile_ns(0.0), samples.front());
    EXPECT_EQ(stats.percentile_ns(1.0), samples.back());
  }
}

TEST(LatencyHistogram, CountAtOrBelowIsCumulative) {
  LatencyHistogram h;
  for (const std::uint64_t ns : {10u, 10u, 100u, 1000u, 5000u}) h.add(ns);
  EXPECT_EQ(h.count_at_or_below(9), 0u);
  EXPECT_EQ(h.count_at_or_below(10), 2u);
  EXPECT_EQ(h.count_at_or_below(500), 3u);
  EXPECT_EQ(h.count_at_or_below(1'000'000), 5u);
  EXPECT_EQ(h.total_count(), 5u);
  EXPECT_EQ(LatencyHistogram{}.percentile_ns(0.5, 0, 0), 0u);
}

}  // namespace
}  // namespace brick
