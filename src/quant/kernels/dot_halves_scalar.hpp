#pragma once
// The reference F16·F16 and BF16·BF16 dot products, which differ only in how a 16-bit value widens:
// the product of two such values is exact in double and so is their sum to a few ulps. Slow on
// purpose: this is what every other backend is tested against. Included only by the scalar
// (baseline) kernel files.
#include <cstddef>
#include <cstdint>

namespace brick::quant::kernels {

template <float (*kWiden)(std::uint16_t) noexcept>
float dot_halves_reference(const std::uint16_t* w, const std::uint16_t* x, std::size_t n) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(kWiden(w[i])) * kWiden(x[i]);
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
