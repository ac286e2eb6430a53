#include "brick/profile/brick_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "brick/core/error.hpp"

namespace brick {

void BrickStats::add(std::uint64_t ns, std::uint64_t elements_done, std::uint64_t bytes_moved,
                     std::uint64_t flops_done) noexcept {
  min_ns = count == 0 ? ns : std::min(min_ns, ns);
  max_ns = std::max(max_ns, ns);
  ++count;
  total_ns += ns;
  elements += elements_done;
  bytes += bytes_moved;
  flops += flops_done;
  welford_step(count, static_cast<double>(ns), welford_mean_ns, welford_m2);
  histogram.add(ns);
}

void BrickStats::merge(const BrickStats& other) noexcept {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  const double n_a = static_cast<double>(count);
  const double n_b = static_cast<double>(other.count);
  const double n = n_a + n_b;
  const double delta = other.welford_mean_ns - welford_mean_ns;
  welford_mean_ns += delta * n_b / n;
  welford_m2 += other.welford_m2 + delta * delta * n_a * n_b / n;
  count += other.count;
  total_ns += other.total_ns;
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
  elements += other.elements;
  bytes += other.bytes;
  flops += other.flops;
  histogram.merge(other.histogram);
}

double BrickStats::mean_ns() const noexcept {
  return count == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(count);
}

double BrickStats::variance_ns2() const noexcept {
  return count < 2 ? 0.0 : std::max(0.0, welford_m2) / static_cast<double>(count);
}

double BrickStats::stddev_ns() const noexcept { return std::sqrt(variance_ns2()); }

std::uint64_t BrickStats::percentile_ns(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) {
    throw InvalidArgument(fmt::format("percentile_ns: q must lie in [0, 1], got {}", q));
  }
  return histogram.percentile_ns(q, min_ns, max_ns);
}

double BrickStats::us_per_token() const noexcept {
  return elements == 0 ? 0.0 : static_cast<double>(total_ns) / 1e3 / static_cast<double>(elements);
}

double BrickStats::tokens_per_second() const noexcept {
  return total_ns == 0 ? 0.0 : static_cast<double>(elements) * 1e9 / static_cast<double>(total_ns);
}

// Bytes per ns is GB/s, FLOPs per ns is GFLOP/s.
double BrickStats::gb_per_second() const noexcept {
  return total_ns == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(total_ns);
}

double BrickStats::gflop_per_second() const noexcept {
  return total_ns == 0 ? 0.0 : static_cast<double>(flops) / static_cast<double>(total_ns);
}

}  // namespace brick
