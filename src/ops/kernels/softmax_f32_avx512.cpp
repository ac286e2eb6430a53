#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

float max_f32_avx512(const float* x, std::size_t n) noexcept {
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  // max(v, acc) returns acc when v is NaN: NaN is skipped, as in the scalar reference.
  __m512 acc0 = neg_inf;
  __m512 acc1 = neg_inf;
  std::size_t i = 0;
  for (; i + 2 * kLanes512 <= n; i += 2 * kLanes512) {
    acc0 = _mm512_max_ps(_mm512_loadu_ps(x + i), acc0);
    acc1 = _mm512_max_ps(_mm512_loadu_ps(x + i + kLanes512), acc1);
  }
  for (; i + kLanes512 <= n; i += kLanes512) acc0 = _mm512_max_ps(_mm512_loadu_ps(x + i), acc0);
  if (i < n) acc1 = _mm512_max_ps(_mm512_mask_loadu_ps(neg_inf, tail_mask16(n - i), x + i), acc1);
  return _mm512_reduce_max_ps(_mm512_max_ps(acc0, acc1));
}

double exp_shifted_f32_avx512(const float* x, float shift, float* out, std::size_t n) noexcept {
  const __m512 s = _mm512_set1_ps(shift);
  __m512d low = _mm512_setzero_pd();
  __m512d high = _mm512_setzero_pd();
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    const __m512 e = exp_f32x16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    _mm512_storeu_ps(out + i, e);
    accumulate_as_double(e, low, high);
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 e =
        _mm512_maskz_mov_ps(mask, exp_f32x16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), s)));
    _mm512_mask_storeu_ps(out + i, mask, e);
    accumulate_as_double(e, low, high);
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(low, high));
}

void scale_f32_avx512(float* x, float scale, std::size_t n) noexcept {
  const __m512 s = _mm512_set1_ps(scale);
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), s));
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    _mm512_mask_storeu_ps(x + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), s));
  }
}

}  // namespace brick::ops::kernels
