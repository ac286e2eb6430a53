#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

// Two vectors per step into four double accumulators: the adds' latency, not the loads, bounds
// this loop, so it needs independent chains.
double sum_squares_f32_avx2(const float* x, std::size_t n) noexcept {
  __m256d low0 = _mm256_setzero_pd();
  __m256d high0 = _mm256_setzero_pd();
  __m256d low1 = _mm256_setzero_pd();
  __m256d high1 = _mm256_setzero_pd();
  std::size_t i = 0;
  for (; i + 2 * kLanes256 <= n; i += 2 * kLanes256) {
    const __m256 v0 = _mm256_loadu_ps(x + i);
    const __m256 v1 = _mm256_loadu_ps(x + i + kLanes256);
    accumulate_as_double(_mm256_mul_ps(v0, v0), low0, high0);
    accumulate_as_double(_mm256_mul_ps(v1, v1), low1, high1);
  }
  for (; i + kLanes256 <= n; i += kLanes256) {
    const __m256 v = _mm256_loadu_ps(x + i);
    accumulate_as_double(_mm256_mul_ps(v, v), low0, high0);
  }
  if (i < n) {
    const __m256 v = _mm256_maskload_ps(x + i, tail_mask8(n - i));
    accumulate_as_double(_mm256_mul_ps(v, v), low1, high1);
  }
  return horizontal_sum(_mm256_add_pd(_mm256_add_pd(low0, high0), _mm256_add_pd(low1, high1)));
}

void scale_mul_f32_avx2(const float* x, float scale, const float* w, float* out,
                        std::size_t n) noexcept {
  const __m256 s = _mm256_set1_ps(scale);
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    const __m256 v =
        _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(out + i, v);
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_maskload_ps(x + i, mask), s),
                                   _mm256_maskload_ps(w + i, mask));
    _mm256_maskstore_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
