// The sum_squares and scale_mul kernels of rms_norm_f32_impl.hpp, built for AVX2.
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/rms_norm_f32_impl.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

double sum_squares_f32_avx2(const float* x, std::size_t n) noexcept {
  return sum_squares_f32<F32x8>(x, n);
}

void scale_mul_f32_avx2(const float* x, float scale, const float* w, float* out,
                        std::size_t n) noexcept {
  scale_mul_f32<F32x8>(x, scale, w, out, n);
}

}  // namespace brick::ops::kernels
