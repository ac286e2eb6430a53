#include <cmath>
#include <limits>

#include "graph/kernels/checksum_kernels.hpp"

namespace brick::graph::kernels {

SummaryLanes::SummaryLanes() noexcept {
  for (std::size_t lane = 0; lane < kSummaryLanes; ++lane) {
    low[lane] = std::numeric_limits<float>::infinity();
    high[lane] = -std::numeric_limits<float>::infinity();
  }
}

void SummaryLanes::add(std::size_t lane, float value) noexcept {
  const bool finite = std::isfinite(value);
  const double v = finite ? static_cast<double>(value) : 0.0;
  sum[lane] += v;
  squares[lane] += v * v;
  low[lane] = finite && value < low[lane] ? value : low[lane];
  high[lane] = finite && value > high[lane] ? value : high[lane];
  not_finite[lane] += finite ? 0 : 1;
}

void summary_lanes_scalar(const float* values, std::size_t blocks, SummaryLanes& lanes) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t lane = 0; lane < kSummaryLanes; ++lane) lanes.add(lane, values[b * kSummaryLanes + lane]);
  }
}

}  // namespace brick::graph::kernels
