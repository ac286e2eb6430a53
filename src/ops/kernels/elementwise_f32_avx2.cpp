// The axpy and add kernels of elementwise_f32_impl.hpp, built for AVX2.
#include "ops/kernels/elementwise_f32_impl.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

void axpy_f32_avx2(float alpha, const float* x, float* y, std::size_t n) noexcept {
  axpy_f32<F32x8>(alpha, x, y, n);
}

void add_f32_avx2(const float* a, const float* b, float* out, std::size_t n) noexcept {
  add_f32<F32x8>(a, b, out, n);
}

}  // namespace brick::ops::kernels
