#pragma once
// A fixed-size log-linear histogram of durations in ns (HDR-histogram layout): values below 64 have
// a bucket each; above that every power of two is split into 32 equal buckets, so a bucket is at most
// 1/32 of its lower bound wide and its midpoint is within 1/64 (1.6%) of any value in it. 1152
// buckets cover 0 ns to 2^40 ns (~18 minutes); longer durations land in the last bucket.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace brick {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 5;
  static constexpr std::size_t kSubBuckets = std::size_t{1} << kSubBucketBits;  // per power of two
  static constexpr unsigned kMaxExponent = 39;  // values up to 2^40 - 1 ns are bucketed exactly
  static constexpr std::size_t kBucketCount = (kMaxExponent - kSubBucketBits + 2) * kSubBuckets;

  static constexpr std::size_t bucket_of(std::uint64_t ns) noexcept {
    if (ns < 2 * kSubBuckets) return static_cast<std::size_t>(ns);
    const unsigned exponent = static_cast<unsigned>(std::bit_width(ns)) - 1;
    if (exponent > kMaxExponent) return kBucketCount - 1;
    const unsigned shift = exponent - kSubBucketBits;
    return shift * kSubBuckets + static_cast<std::size_t>(ns >> shift);
  }
  static constexpr std::uint64_t bucket_lower_ns(std::size_t bucket) noexcept {
    if (bucket < 2 * kSubBuckets) return bucket;
    const unsigned shift = static_cast<unsigned>(bucket / kSubBuckets) - 1;
    return (std::uint64_t{bucket % kSubBuckets} + kSubBuckets) << shift;
  }
  static constexpr std::uint64_t bucket_width_ns(std::size_t bucket) noexcept {
    return bucket < 2 * kSubBuckets ? 1 : std::uint64_t{1} << (bucket / kSubBuckets - 1);
  }
  // The value reported for every sample in the bucket: its midpoint, rounded down.
  static constexpr std::uint64_t bucket_value_ns(std::size_t bucket) noexcept {
    return bucket_lower_ns(bucket) + (bucket_width_ns(bucket) - 1) / 2;
  }

  void add(std::uint64_t ns) noexcept { ++counts_[bucket_of(ns)]; }
  void add_bucket(std::size_t bucket, std::uint64_t count) noexcept { counts_[bucket] += count; }
  void merge(const LatencyHistogram& other) noexcept {
    for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  }

  std::uint64_t count(std::size_t bucket) const noexcept { return counts_[bucket]; }
  std::uint64_t total_count() const noexcept;

  // Nearest-rank percentile: the bucket value of the ceil(q * n)-th smallest sample (at least the
  // first), clamped to [min_ns, max_ns]; the first and last ranks are min_ns and max_ns exactly. 0
  // when empty. q must lie in [0, 1]; the caller validates it.
  std::uint64_t percentile_ns(double q, std::uint64_t min_ns, std::uint64_t max_ns) const noexcept;

  // Samples whose bucket value is <= ns (cumulative), for exposition formats with fixed bounds.
  std::uint64_t count_at_or_below(std::uint64_t ns) const noexcept;

 private:
  std::array<std::uint64_t, kBucketCount> counts_{};
};

}  // namespace brick
