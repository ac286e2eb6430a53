#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

// Products rounded to float, summed in double: ggml's generic ggml_vec_dot_f32.
float dot_f32_scalar(const float* a, const float* b, std::size_t n) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i] * b[i]);
  return static_cast<float>(sum);
}

}  // namespace brick::ops::kernels
