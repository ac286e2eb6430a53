#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {
namespace {

// x / (1 + exp(-x)) with a true division, as the scalar reference computes it.
inline __m512 silu_f32x16(__m512 x) noexcept {
  const __m512 e = exp_f32x16</*kNegate=*/true>(x);
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

}  // namespace

void silu_f32_avx512(const float* x, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    _mm512_storeu_ps(out + i, silu_f32x16(_mm512_loadu_ps(x + i)));
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    _mm512_mask_storeu_ps(out + i, mask, silu_f32x16(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

void swiglu_f32_avx512(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    const __m512 v = _mm512_mul_ps(silu_f32x16(_mm512_loadu_ps(gate + i)), _mm512_loadu_ps(up + i));
    _mm512_storeu_ps(out + i, v);
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 v = _mm512_mul_ps(silu_f32x16(_mm512_maskz_loadu_ps(mask, gate + i)),
                                   _mm512_maskz_loadu_ps(mask, up + i));
    _mm512_mask_storeu_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
