// The dot kernel of dot_f32_impl.hpp, built for AVX2.
#include "ops/kernels/dot_f32_impl.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

float dot_f32_avx2(const float* a, const float* b, std::size_t n) noexcept {
  return dot_f32<F32x8>(a, b, n);
}

}  // namespace brick::ops::kernels
