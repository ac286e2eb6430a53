#include "brick/profile/latency_histogram.hpp"

#include <cmath>

namespace brick {

std::uint64_t LatencyHistogram::total_count() const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t c : counts_) total += c;
  return total;
}

std::uint64_t LatencyHistogram::percentile_ns(double q, std::uint64_t min_ns,
                                              std::uint64_t max_ns) const noexcept {
  const std::uint64_t total = total_count();
  if (total == 0) return 0;
  const double wanted = std::ceil(q * static_cast<double>(total));
  const std::uint64_t rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, total);
  if (rank == 1) return min_ns;
  if (rank == total) return std::max(min_ns, max_ns);
  std::uint64_t seen = 0;
  for (std::size_t bucket = 0; bucket < kBucketCount; ++bucket) {
    seen += counts_[bucket];
    if (seen >= rank) return std::clamp(bucket_value_ns(bucket), min_ns, std::max(min_ns, max_ns));
  }
  return max_ns;
}

std::uint64_t LatencyHistogram::count_at_or_below(std::uint64_t ns) const noexcept {
  std::uint64_t total = 0;
  for (std::size_t bucket = 0; bucket < kBucketCount && bucket_value_ns(bucket) <= ns; ++bucket) {
    total += counts_[bucket];
  }
  return total;
}

}  // namespace brick
