#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

float max_f32_avx2(const float* x, std::size_t n) noexcept {
  const __m256 neg_inf = _mm256_set1_ps(-__builtin_inff());
  // max(v, acc) returns acc when v is NaN: NaN is skipped, as in the scalar reference.
  __m256 acc0 = neg_inf;
  __m256 acc1 = neg_inf;
  std::size_t i = 0;
  for (; i + 2 * kLanes256 <= n; i += 2 * kLanes256) {
    acc0 = _mm256_max_ps(_mm256_loadu_ps(x + i), acc0);
    acc1 = _mm256_max_ps(_mm256_loadu_ps(x + i + kLanes256), acc1);
  }
  for (; i + kLanes256 <= n; i += kLanes256) acc0 = _mm256_max_ps(_mm256_loadu_ps(x + i), acc0);
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 v =
        _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + i, mask), _mm256_castsi256_ps(mask));
    acc1 = _mm256_max_ps(v, acc1);
  }
  return horizontal_max(_mm256_max_ps(acc0, acc1));
}

double exp_shifted_f32_avx2(const float* x, float shift, float* out, std::size_t n) noexcept {
  const __m256 s = _mm256_set1_ps(shift);
  __m256d low = _mm256_setzero_pd();
  __m256d high = _mm256_setzero_pd();
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    const __m256 e = exp_f32x8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(out + i, e);
    accumulate_as_double(e, low, high);
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 e = _mm256_and_ps(exp_f32x8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)),
                                   _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(out + i, mask, e);
    accumulate_as_double(e, low, high);
  }
  return horizontal_sum(_mm256_add_pd(low, high));
}

void scale_f32_avx2(float* x, float scale, std::size_t n) noexcept {
  const __m256 s = _mm256_set1_ps(scale);
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), s));
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    _mm256_maskstore_ps(x + i, mask, _mm256_mul_ps(_mm256_maskload_ps(x + i, mask), s));
  }
}

}  // namespace brick::ops::kernels
