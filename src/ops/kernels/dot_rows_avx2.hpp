#pragma once
// The dot-product core of dot_f32_avx2 and matvec_f32_avx2: R rows against one vector, with the
// same per-row arithmetic whatever R is, so a matvec row equals dot(row, x) bit for bit.
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {
namespace {

// y[r] = dot(w + r * stride, x) for r < R, n floats each. Four accumulators per row hide the FMA
// latency; x is loaded once per step and shared by the R rows.
template <std::size_t R>
inline void dot_rows_f32x8(const float* w, std::size_t stride, const float* x, std::size_t n,
                           float* y) noexcept {
  __m256 acc[R][4];
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t k = 0; k < 4; ++k) acc[r][k] = _mm256_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 4 * kLanes256 <= n; i += 4 * kLanes256) {
    __m256 xv[4];
    for (std::size_t k = 0; k < 4; ++k) xv[k] = _mm256_loadu_ps(x + i + k * kLanes256);
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t k = 0; k < 4; ++k) {
        acc[r][k] =
            _mm256_fmadd_ps(_mm256_loadu_ps(w + r * stride + i + k * kLanes256), xv[k], acc[r][k]);
      }
    }
  }
  for (; i + kLanes256 <= n; i += kLanes256) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    for (std::size_t r = 0; r < R; ++r) {
      acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(w + r * stride + i), xv, acc[r][0]);
    }
  }
  if (i < n) {
    const __m256i mask = tail_mask8(n - i);
    const __m256 xv = _mm256_maskload_ps(x + i, mask);
    for (std::size_t r = 0; r < R; ++r) {
      acc[r][1] = _mm256_fmadd_ps(_mm256_maskload_ps(w + r * stride + i, mask), xv, acc[r][1]);
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    y[r] = horizontal_sum(
        _mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]), _mm256_add_ps(acc[r][2], acc[r][3])));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
