#include "brick/trace/tensor_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "brick/core/error.hpp"

namespace brick::trace {
namespace {

// 16 floats: one AVX-512 register or two AVX2 ones; the per-block loops below are written so that
// the compiler keeps them branch-free (selects, not jumps) and vectorises them.
constexpr std::size_t kBlock = 16;

bool is_finite(float x) noexcept {
  return (std::bit_cast<std::uint32_t>(x) & 0x7f800000u) != 0x7f800000u;
}

struct Running {
  double n = 0.0;
  double mean = 0.0;
  double m2 = 0.0;
  double sum_squares = 0.0;
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  std::uint64_t nan = 0;
  std::uint64_t non_finite = 0;

  // Chan et al.'s pairwise update: merges a block of nb values with mean mb and squared deviations m2b.
  void merge(double nb, double mb, double m2b) noexcept {
    const double total = n + nb;
    const double delta = mb - mean;
    mean += delta * nb / total;
    m2 += m2b + delta * delta * n * nb / total;
    n = total;
  }

  void add_block(const float* x, std::size_t size) noexcept {
    double sum = 0.0;
    double squares = 0.0;
    std::uint32_t count = 0;
    std::uint32_t nans = 0;
    float lo = std::numeric_limits<float>::infinity();
    float hi = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < size; ++i) {
      const bool finite = is_finite(x[i]);
      const double v = finite ? static_cast<double>(x[i]) : 0.0;
      count += finite ? 1u : 0u;
      nans += x[i] != x[i] ? 1u : 0u;
      sum += v;
      squares += v * v;
      lo = std::min(lo, finite ? x[i] : std::numeric_limits<float>::infinity());
      hi = std::max(hi, finite ? x[i] : -std::numeric_limits<float>::infinity());
    }
    nan += nans;
    non_finite += size - count;
    if (count == 0) return;
    const double block_mean = sum / count;
    double deviations = 0.0;
    for (std::size_t i = 0; i < size; ++i) {
      const double d = is_finite(x[i]) ? static_cast<double>(x[i]) - block_mean : 0.0;
      deviations += d * d;
    }
    merge(count, block_mean, deviations);
    sum_squares += squares;
    min = std::min(min, lo);
    max = std::max(max, hi);
  }
};

void fill_histogram(std::span<const float> values, Histogram& histogram) noexcept {
  const HistogramSpec& spec = histogram.spec;
  const double scale = static_cast<double>(spec.bins) / (spec.hi - spec.lo);
  for (const float x : values) {
    if (!is_finite(x)) continue;
    const double v = x;
    if (v < spec.lo) {
      ++histogram.below;
    } else if (v >= spec.hi) {
      ++histogram.above;
    } else {
      // (v - lo) * scale can round up to bins for v just below hi.
      const auto bin = std::min(static_cast<std::size_t>((v - spec.lo) * scale), spec.bins - 1);
      ++histogram.counts[bin];
    }
  }
}

}  // namespace

void HistogramSpec::validate() const {
  if (bins == 0) return;
  if (bins > kMaxHistogramBins) {
    throw InvalidArgument(fmt::format("histogram of {} bins; at most {}", bins, kMaxHistogramBins));
  }
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
    throw InvalidArgument(fmt::format("histogram range [{}, {}); expected finite bounds with lo < hi", lo, hi));
  }
}

TensorStats compute_tensor_stats(std::span<const float> values, const HistogramSpec& histogram) noexcept {
  Running running;
  std::size_t i = 0;
  for (; i + kBlock <= values.size(); i += kBlock) running.add_block(values.data() + i, kBlock);
  if (i < values.size()) running.add_block(values.data() + i, values.size() - i);

  TensorStats stats;
  stats.count = static_cast<std::uint64_t>(running.n);
  stats.nan_count = running.nan;
  stats.inf_count = running.non_finite - running.nan;
  if (stats.count > 0) {
    stats.min = running.min;
    stats.max = running.max;
    stats.mean = running.mean;
    stats.std = std::sqrt(std::max(0.0, running.m2 / running.n));
    stats.l2_norm = std::sqrt(running.sum_squares);
  }
  stats.histogram.spec = histogram;
  if (histogram.enabled()) fill_histogram(values, stats.histogram);
  return stats;
}

}  // namespace brick::trace
