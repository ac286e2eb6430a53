#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

void matvec_f32_scalar(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32_scalar(w + r * cols, x, cols);
}

void matvec_transposed_f32_scalar(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                  float* y) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    float* const yi = y + i * cols;
    const float* const xi = x + i * rows;
    for (std::size_t c = 0; c < cols; ++c) yi[c] = 0.0f;
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) yi[c] += xi[r] * w[r * cols + c];
    }
  }
}

}  // namespace brick::ops::kernels
