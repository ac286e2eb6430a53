#include "ops/kernels/dot_avx2.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

float dot_f32_avx2(const float* a, const float* b, std::size_t n) noexcept {
  return dot_f32x8(a, b, n);
}

}  // namespace brick::ops::kernels
