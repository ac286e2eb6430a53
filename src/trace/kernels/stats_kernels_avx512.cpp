#include "core/simd_avx512.hpp"

#include "trace/kernels/stats_kernels.hpp"

namespace brick::trace::kernels {
namespace {

// The lanes of v that hold finite values, among those of `lanes`.
__mmask16 finite_lanes(__m512 v, __mmask16 lanes) noexcept {
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  return _mm512_mask_cmpneq_epi32_mask(lanes, _mm512_and_si512(_mm512_castps_si512(v), exponent), exponent);
}

__m512d low_half(__m512 v) noexcept { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
__m512d high_half(__m512 v) noexcept {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

__mmask16 lanes_of(std::size_t i, std::size_t n) noexcept {
  return n - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1u);
}

}  // namespace

BlockSums tensor_block_sums_avx512(const float* x, std::size_t n) noexcept {
  BlockSums s;
  __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
  __m512 lo = _mm512_set1_ps(s.min), hi = _mm512_set1_ps(s.max);
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = lanes_of(i, n);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, x + i);
    const __mmask16 finite = finite_lanes(v, lanes);
    s.count += static_cast<std::uint32_t>(__builtin_popcount(finite));
    s.nan += static_cast<std::uint32_t>(__builtin_popcount(_mm512_mask_cmp_ps_mask(lanes, v, v, _CMP_UNORD_Q)));
    const __m512 kept = _mm512_maskz_mov_ps(finite, v);
    sum_lo = _mm512_add_pd(sum_lo, low_half(kept));
    sum_hi = _mm512_add_pd(sum_hi, high_half(kept));
    lo = _mm512_mask_min_ps(lo, finite, lo, v);
    hi = _mm512_mask_max_ps(hi, finite, hi, v);
  }
  if (s.count == 0) return s;
  s.sum = _mm512_reduce_add_pd(_mm512_add_pd(sum_lo, sum_hi));
  s.min = _mm512_reduce_min_ps(lo);
  s.max = _mm512_reduce_max_ps(hi);
  const __m512d mean = _mm512_set1_pd(s.sum / s.count);
  __m512d m2_lo = _mm512_setzero_pd(), m2_hi = _mm512_setzero_pd();
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = lanes_of(i, n);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, x + i);
    const __mmask16 finite = finite_lanes(v, lanes);
    const __m512d d_lo = _mm512_sub_pd(low_half(v), mean);
    const __m512d d_hi = _mm512_sub_pd(high_half(v), mean);
    m2_lo = _mm512_mask3_fmadd_pd(d_lo, d_lo, m2_lo, static_cast<__mmask8>(finite));
    m2_hi = _mm512_mask3_fmadd_pd(d_hi, d_hi, m2_hi, static_cast<__mmask8>(finite >> 8));
  }
  s.m2 = _mm512_reduce_add_pd(_mm512_add_pd(m2_lo, m2_hi));
  return s;
}

ResidualSums residual_sums_avx512(const float* x, const float* r, std::size_t n) noexcept {
  __m512d residual_lo = _mm512_setzero_pd(), residual_hi = _mm512_setzero_pd();
  __m512d delta_lo = _mm512_setzero_pd(), delta_hi = _mm512_setzero_pd();
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = lanes_of(i, n);
    const __m512 xv = _mm512_maskz_loadu_ps(lanes, x + i);
    const __m512 rv = _mm512_maskz_loadu_ps(lanes, r + i);
    const __m512d r_lo = low_half(rv), r_hi = high_half(rv);
    const __m512d d_lo = _mm512_sub_pd(low_half(xv), r_lo), d_hi = _mm512_sub_pd(high_half(xv), r_hi);
    residual_lo = _mm512_fmadd_pd(r_lo, r_lo, residual_lo);
    residual_hi = _mm512_fmadd_pd(r_hi, r_hi, residual_hi);
    delta_lo = _mm512_fmadd_pd(d_lo, d_lo, delta_lo);
    delta_hi = _mm512_fmadd_pd(d_hi, d_hi, delta_hi);
  }
  return {_mm512_reduce_add_pd(_mm512_add_pd(residual_lo, residual_hi)),
          _mm512_reduce_add_pd(_mm512_add_pd(delta_lo, delta_hi))};
}

}  // namespace brick::trace::kernels
