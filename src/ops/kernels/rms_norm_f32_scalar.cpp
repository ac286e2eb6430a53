#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

double sum_squares_f32_scalar(const float* x, std::size_t n) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  return sum;
}

void scale_mul_f32_scalar(const float* x, float scale, const float* w, float* out,
                          std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * w[i];
}

}  // namespace brick::ops::kernels
