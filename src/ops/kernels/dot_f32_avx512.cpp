#include "ops/kernels/dot_rows_avx512.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

float dot_f32_avx512(const float* a, const float* b, std::size_t n) noexcept {
  float y;
  dot_rows_f32x16<1>(a, 0, b, n, &y);
  return y;
}

}  // namespace brick::ops::kernels
