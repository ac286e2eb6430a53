#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

// Two vectors per step into four double accumulators: the adds' latency, not the loads, bounds
// this loop, so it needs independent chains.
double sum_squares_f32_avx512(const float* x, std::size_t n) noexcept {
  __m512d low0 = _mm512_setzero_pd();
  __m512d high0 = _mm512_setzero_pd();
  __m512d low1 = _mm512_setzero_pd();
  __m512d high1 = _mm512_setzero_pd();
  std::size_t i = 0;
  for (; i + 2 * kLanes512 <= n; i += 2 * kLanes512) {
    const __m512 v0 = _mm512_loadu_ps(x + i);
    const __m512 v1 = _mm512_loadu_ps(x + i + kLanes512);
    accumulate_as_double(_mm512_mul_ps(v0, v0), low0, high0);
    accumulate_as_double(_mm512_mul_ps(v1, v1), low1, high1);
  }
  for (; i + kLanes512 <= n; i += kLanes512) {
    const __m512 v = _mm512_loadu_ps(x + i);
    accumulate_as_double(_mm512_mul_ps(v, v), low0, high0);
  }
  if (i < n) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask16(n - i), x + i);
    accumulate_as_double(_mm512_mul_ps(v, v), low1, high1);
  }
  return _mm512_reduce_add_pd(
      _mm512_add_pd(_mm512_add_pd(low0, high0), _mm512_add_pd(low1, high1)));
}

void scale_mul_f32_avx512(const float* x, float scale, const float* w, float* out,
                          std::size_t n) noexcept {
  const __m512 s = _mm512_set1_ps(scale);
  std::size_t i = 0;
  for (; i + kLanes512 <= n; i += kLanes512) {
    const __m512 v =
        _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), s), _mm512_loadu_ps(w + i));
    _mm512_storeu_ps(out + i, v);
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), s),
                                   _mm512_maskz_loadu_ps(mask, w + i));
    _mm512_mask_storeu_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
