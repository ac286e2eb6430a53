#include "ops/kernels/dot_rows_avx2.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

float dot_f32_avx2(const float* a, const float* b, std::size_t n) noexcept {
  float y;
  dot_rows_f32x8<1>(a, 0, b, n, &y);
  return y;
}

}  // namespace brick::ops::kernels
