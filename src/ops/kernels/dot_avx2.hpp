#pragma once
// The dot-product loop of dot_f32_avx2 and matvec_f32_avx2, so a matvec row equals dot(row, x)
// bit for bit.
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {
namespace {

// Four accumulators hide the FMA latency; the tail is one masked load, no scalar loop.
inline float dot_f32x8(const float* a, const float* b, std::size_t n) noexcept {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 4 * kLanes256 <= n; i += 4 * kLanes256) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
  }
  for (; i + kLanes256 <= n; i += kLanes256) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, mask), _mm256_maskload_ps(b + i, mask), acc1);
  }
  return horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
}

}  // namespace
}  // namespace brick::ops::kernels
