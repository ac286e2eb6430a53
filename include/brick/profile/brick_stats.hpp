#pragma once
// Statistics of one brick (or one category of bricks): what the profiler reports per BrickId.
#include <cstdint>

#include "brick/profile/latency_histogram.hpp"

namespace brick {

struct BrickStats {
  std::uint64_t count = 0;     // executions
  std::uint64_t total_ns = 0;  // summed durations
  std::uint64_t min_ns = 0;    // 0 while count == 0
  std::uint64_t max_ns = 0;
  std::uint64_t elements = 0;  // tokens (or elements) processed, summed over executions
  std::uint64_t bytes = 0;     // bytes read plus written, summed
  std::uint64_t flops = 0;     // floating-point operations, summed
  // Welford's running mean and sum of squared deviations of the durations (ns, ns^2).
  double welford_mean_ns = 0.0;
  double welford_m2 = 0.0;
  LatencyHistogram histogram;

  // Adds one execution.
  void add(std::uint64_t ns, std::uint64_t elements_done, std::uint64_t bytes_moved,
           std::uint64_t flops_done) noexcept;
  // Combines two disjoint sets of executions (Chan et al.'s parallel variance).
  void merge(const BrickStats& other) noexcept;

  double mean_ns() const noexcept;
  double variance_ns2() const noexcept;  // population variance; 0 below two samples
  double stddev_ns() const noexcept;
  // Nearest-rank percentile from the histogram, q in [0, 1] (InvalidArgument otherwise); within
  // 1.6% of the exact sample percentile.
  std::uint64_t percentile_ns(double q) const;

  // Derived throughput; each is 0 when its denominator is 0.
  double us_per_token() const noexcept;       // total time / elements
  double tokens_per_second() const noexcept;  // elements / total time
  double gb_per_second() const noexcept;      // bytes / total time
  double gflop_per_second() const noexcept;   // flops / total time
};

// One step of Welford's algorithm: `count` already includes the new sample x.
inline void welford_step(std::uint64_t count, double x, double& mean, double& m2) noexcept {
  const double delta = x - mean;
  mean += delta / static_cast<double>(count);
  m2 += delta * (x - mean);
}

}  // namespace brick
