// The axpy and add kernels of elementwise_f32_impl.hpp, built for AVX-512.
#include "ops/kernels/elementwise_f32_impl.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

void axpy_f32_avx512(float alpha, const float* x, float* y, std::size_t n) noexcept {
  axpy_f32<F32x16>(alpha, x, y, n);
}

void add_f32_avx512(const float* a, const float* b, float* out, std::size_t n) noexcept {
  add_f32<F32x16>(a, b, out, n);
}

}  // namespace brick::ops::kernels
