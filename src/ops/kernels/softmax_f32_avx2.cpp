// The max, exp_shifted and scale kernels of softmax_f32_impl.hpp, built for AVX2.
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"
#include "ops/kernels/softmax_f32_impl.hpp"

namespace brick::ops::kernels {

float max_f32_avx2(const float* x, std::size_t n) noexcept {
  return max_f32<F32x8>(x, n);
}

double exp_shifted_f32_avx2(const float* x, float shift, float* out, std::size_t n) noexcept {
  return exp_shifted_f32<F32x8>(x, shift, out, n);
}

void scale_f32_avx2(float* x, float scale, std::size_t n) noexcept {
  scale_f32<F32x8>(x, scale, n);
}

}  // namespace brick::ops::kernels
