// The max, exp_shifted and scale kernels of softmax_f32_impl.hpp, built for AVX-512.
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"
#include "ops/kernels/softmax_f32_impl.hpp"

namespace brick::ops::kernels {

float max_f32_avx512(const float* x, std::size_t n) noexcept {
  return max_f32<F32x16>(x, n);
}

double exp_shifted_f32_avx512(const float* x, float shift, float* out, std::size_t n) noexcept {
  return exp_shifted_f32<F32x16>(x, shift, out, n);
}

void scale_f32_avx512(float* x, float scale, std::size_t n) noexcept {
  scale_f32<F32x16>(x, scale, n);
}

}  // namespace brick::ops::kernels
