#include "brick/trace/tensor_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "brick/core/error.hpp"
#include "ops/dispatch.hpp"
#include "trace/kernels/stats_kernels.hpp"

namespace brick::trace {
namespace {

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

  // Chan et al.'s pairwise update with one block's sums.
  void merge(const kernels::BlockSums& b, std::size_t size) noexcept {
    nan += b.nan;
    non_finite += size - b.count;
    if (b.count == 0) return;
    const double nb = b.count;
    const double mb = b.sum / nb;
    const double total = n + nb;
    const double delta = mb - mean;
    mean += delta * nb / total;
    m2 += b.m2 + delta * delta * n * nb / total;
    n = total;
    sum_squares += b.m2 + mb * b.sum;  // sum x^2 = sum (x - mb)^2 + nb mb^2
    min = std::min(min, b.min);
    max = std::max(max, b.max);
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

TensorStats compute_tensor_stats(std::span<const float> values, const HistogramSpec& histogram, Backend backend) {
  const kernels::TensorBlockKernel block = ops::detail::pick<kernels::TensorBlockKernel>(
      resolve(backend), kernels::tensor_block_sums_scalar, kernels::tensor_block_sums_avx2,
      kernels::tensor_block_sums_avx512);
  Running running;
  for (std::size_t i = 0; i < values.size(); i += kernels::kTensorStatsBlock) {
    const std::size_t size = std::min(kernels::kTensorStatsBlock, values.size() - i);
    running.merge(block(values.data() + i, size), size);
  }

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
