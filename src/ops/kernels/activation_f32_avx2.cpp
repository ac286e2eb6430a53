#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {
namespace {

// x / (1 + exp(-x)) with a true division, as the scalar reference computes it.
inline __m256 silu_f32x8(__m256 x) noexcept {
  const __m256 e = exp_f32x8</*kNegate=*/true>(x);
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

}  // namespace

void silu_f32_avx2(const float* x, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    _mm256_storeu_ps(out + i, silu_f32x8(_mm256_loadu_ps(x + i)));
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    _mm256_maskstore_ps(out + i, mask, silu_f32x8(_mm256_maskload_ps(x + i, mask)));
  }
}

void swiglu_f32_avx2(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes256 <= n; i += kLanes256) {
    const __m256 v = _mm256_mul_ps(silu_f32x8(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i));
    _mm256_storeu_ps(out + i, v);
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 v = _mm256_mul_ps(silu_f32x8(_mm256_maskload_ps(gate + i, mask)),
                                   _mm256_maskload_ps(up + i, mask));
    _mm256_maskstore_ps(out + i, mask, v);
  }
}

}  // namespace brick::ops::kernels
