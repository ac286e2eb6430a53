// The silu and swiglu kernels of activation_f32_impl.hpp, built for AVX2.
#include "ops/kernels/activation_f32_impl.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

void silu_f32_avx2(const float* x, float* out, std::size_t n) noexcept {
  silu_f32<F32x8>(x, out, n);
}

void swiglu_f32_avx2(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  swiglu_f32<F32x8>(gate, up, out, n);
}

}  // namespace brick::ops::kernels
