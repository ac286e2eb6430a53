// The silu and swiglu kernels of activation_f32_impl.hpp, built for AVX-512.
#include "ops/kernels/activation_f32_impl.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

void silu_f32_avx512(const float* x, float* out, std::size_t n) noexcept {
  silu_f32<F32x16>(x, out, n);
}

void swiglu_f32_avx512(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  swiglu_f32<F32x16>(gate, up, out, n);
}

}  // namespace brick::ops::kernels
