#include "ops/kernels/dot_avx512.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

float dot_f32_avx512(const float* a, const float* b, std::size_t n) noexcept {
  return dot_f32x16(a, b, n);
}

}  // namespace brick::ops::kernels
