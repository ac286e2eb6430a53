// The matvec and matvec_transposed kernels of matvec_f32_impl.hpp, built for AVX-512.
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/matvec_f32_impl.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

void matvec_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  matvec_f32<F32x16>(w, rows, cols, x, y);
}

void matvec_transposed_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                  float* y) noexcept {
  matvec_transposed_f32<F32x16>(w, rows, cols, x, count, y);
}

}  // namespace brick::ops::kernels
