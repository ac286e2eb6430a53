#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

void axpy_f32_scalar(float alpha, const float* x, float* y, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void add_f32_scalar(const float* a, const float* b, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace brick::ops::kernels
