#include <cmath>
#include <limits>

#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

float max_f32_scalar(const float* x, std::size_t n) noexcept {
  float max = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] > max) max = x[i];  // false for NaN, which is skipped
  }
  return max;
}

double exp_shifted_f32_scalar(const float* x, float shift, float* out, std::size_t n) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = std::exp(x[i] - shift);
    sum += static_cast<double>(out[i]);
  }
  return sum;
}

void scale_f32_scalar(float* x, float scale, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] *= scale;
}

}  // namespace brick::ops::kernels
