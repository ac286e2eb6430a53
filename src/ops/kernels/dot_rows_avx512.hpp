#pragma once
// The dot-product core of dot_f32_avx512 and matvec_f32_avx512: R rows against one vector, with the
// same per-row arithmetic whatever R is, so a matvec row equals dot(row, x) bit for bit.
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {
namespace {

// y[r] = dot(w + r * stride, x) for r < R, n floats each. Four accumulators per row hide the FMA
// latency; x is loaded once per step and shared by the R rows.
template <std::size_t R>
inline void dot_rows_f32x16(const float* w, std::size_t stride, const float* x, std::size_t n,
                            float* y) noexcept {
  __m512 acc[R][4];
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t k = 0; k < 4; ++k) acc[r][k] = _mm512_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 4 * kLanes512 <= n; i += 4 * kLanes512) {
    __m512 xv[4];
    for (std::size_t k = 0; k < 4; ++k) xv[k] = _mm512_loadu_ps(x + i + k * kLanes512);
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t k = 0; k < 4; ++k) {
        acc[r][k] =
            _mm512_fmadd_ps(_mm512_loadu_ps(w + r * stride + i + k * kLanes512), xv[k], acc[r][k]);
      }
    }
  }
  for (; i + kLanes512 <= n; i += kLanes512) {
    const __m512 xv = _mm512_loadu_ps(x + i);
    for (std::size_t r = 0; r < R; ++r) {
      acc[r][0] = _mm512_fmadd_ps(_mm512_loadu_ps(w + r * stride + i), xv, acc[r][0]);
    }
  }
  if (i < n) {
    const __mmask16 mask = tail_mask16(n - i);
    const __m512 xv = _mm512_maskz_loadu_ps(mask, x + i);
    for (std::size_t r = 0; r < R; ++r) {
      acc[r][1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, w + r * stride + i), xv, acc[r][1]);
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    y[r] = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]), _mm512_add_ps(acc[r][2], acc[r][3])));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
