#include <algorithm>
#include <bit>

#include "trace/kernels/stats_kernels.hpp"

namespace brick::trace::kernels {
namespace {

bool is_finite(float x) noexcept { return (std::bit_cast<std::uint32_t>(x) & 0x7f800000u) != 0x7f800000u; }

}  // namespace

BlockSums tensor_block_sums_scalar(const float* x, std::size_t n) noexcept {
  BlockSums s;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    s.nan += v != v ? 1u : 0u;
    if (!is_finite(v)) continue;
    ++s.count;
    s.sum += static_cast<double>(v);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  if (s.count == 0) return s;
  const double mean = s.sum / s.count;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_finite(x[i])) continue;
    const double d = static_cast<double>(x[i]) - mean;
    s.m2 += d * d;
  }
  return s;
}

ResidualSums residual_sums_scalar(const float* x, const float* r, std::size_t n) noexcept {
  ResidualSums s;
  for (std::size_t i = 0; i < n; ++i) {
    const double residual = r[i];
    const double delta = static_cast<double>(x[i]) - residual;
    s.residual += residual * residual;
    s.delta += delta * delta;
  }
  return s;
}

}  // namespace brick::trace::kernels
