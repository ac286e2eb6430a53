#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

void axpy_f32_avx2(float alpha, const float* x, float* y, std::size_t n) noexcept {
  const __m256 a = _mm256_set1_ps(alpha);
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(a, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 v =
        _mm256_fmadd_ps(a, _mm256_maskload_ps(x + i, mask), _mm256_maskload_ps(y + i, mask));
    _mm256_maskstore_ps(y + i, mask, v);
  }
}

void add_f32_avx2(const float* a, const float* b, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 v =
        _mm256_add_ps(_mm256_maskload_ps(a + i, mask), _mm256_maskload_ps(b + i, mask));
    _mm256_maskstore_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
