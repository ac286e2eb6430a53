#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

void axpy_f32_avx512(float alpha, const float* x, float* y, std::size_t n) noexcept {
  const __m512 a = _mm512_set1_ps(alpha);
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(a, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 v =
        _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(mask, x + i), _mm512_maskz_loadu_ps(mask, y + i));
    _mm512_mask_storeu_ps(y + i, mask, v);
  }
}

void add_f32_avx512(const float* a, const float* b, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    _mm512_storeu_ps(out + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 v =
        _mm512_add_ps(_mm512_maskz_loadu_ps(mask, a + i), _mm512_maskz_loadu_ps(mask, b + i));
    _mm512_mask_storeu_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
