// The rope_norm and rope_neox kernels of rope_f32_impl.hpp, built for AVX-512.
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/rope_f32_impl.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

void rope_norm_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  rope_norm_f32<F32x16>(x, out, n_heads, head_dim, cos, sin, first_pair, n_pairs);
}

void rope_neox_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  rope_neox_f32<F32x16>(x, out, n_heads, head_dim, cos, sin, first_pair, n_pairs);
}

}  // namespace brick::ops::kernels
