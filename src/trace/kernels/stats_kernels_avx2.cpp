#include "core/simd_avx2.hpp"

#include <algorithm>
#include <bit>

#include "trace/kernels/stats_kernels.hpp"

namespace brick::trace::kernels {
namespace {

// All ones in the 32-bit lanes of v that hold finite values.
__m256i finite_lanes(__m256 v) noexcept {
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  const __m256i bits = _mm256_and_si256(_mm256_castps_si256(v), exponent);
  return _mm256_xor_si256(_mm256_cmpeq_epi32(bits, exponent), _mm256_set1_epi32(-1));
}

// A 32-bit lane mask widened to the 64-bit lanes of its low / high four values.
__m256d wide_low(__m256i mask) noexcept { return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(mask))); }
__m256d wide_high(__m256i mask) noexcept { return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(mask, 1))); }

__m256d low_half(__m256 v) noexcept { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
__m256d high_half(__m256 v) noexcept { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

double add_lanes(__m256d v) noexcept {
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

}  // namespace

BlockSums tensor_block_sums_avx2(const float* x, std::size_t n) noexcept {
  BlockSums s;
  const std::size_t whole = n - n % 8;
  __m256d sum_lo = _mm256_setzero_pd(), sum_hi = _mm256_setzero_pd();
  __m256 lo = _mm256_set1_ps(s.min), hi = _mm256_set1_ps(s.max);
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i finite = finite_lanes(v);
    s.count += static_cast<std::uint32_t>(__builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(finite))));
    s.nan += static_cast<std::uint32_t>(__builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))));
    const __m256 kept = _mm256_and_ps(v, _mm256_castsi256_ps(finite));
    sum_lo = _mm256_add_pd(sum_lo, low_half(kept));
    sum_hi = _mm256_add_pd(sum_hi, high_half(kept));
    lo = _mm256_blendv_ps(lo, _mm256_min_ps(lo, v), _mm256_castsi256_ps(finite));
    hi = _mm256_blendv_ps(hi, _mm256_max_ps(hi, v), _mm256_castsi256_ps(finite));
  }
  // The tail, as the scalar kernel sums it.
  const BlockSums tail = tensor_block_sums_scalar(x + whole, n - whole);
  s.count += tail.count;
  s.nan += tail.nan;
  if (s.count == 0) return s;
  s.sum = add_lanes(_mm256_add_pd(sum_lo, sum_hi)) + tail.sum;
  alignas(32) float lows[8], highs[8];
  _mm256_store_ps(lows, lo);
  _mm256_store_ps(highs, hi);
  s.min = std::min(*std::min_element(lows, lows + 8), tail.min);
  s.max = std::max(*std::max_element(highs, highs + 8), tail.max);
  const double mean_value = s.sum / s.count;
  const __m256d mean = _mm256_set1_pd(mean_value);
  __m256d m2_lo = _mm256_setzero_pd(), m2_hi = _mm256_setzero_pd();
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i finite = finite_lanes(v);
    const __m256d d_lo = _mm256_and_pd(_mm256_sub_pd(low_half(v), mean), wide_low(finite));
    const __m256d d_hi = _mm256_and_pd(_mm256_sub_pd(high_half(v), mean), wide_high(finite));
    m2_lo = _mm256_fmadd_pd(d_lo, d_lo, m2_lo);
    m2_hi = _mm256_fmadd_pd(d_hi, d_hi, m2_hi);
  }
  s.m2 = add_lanes(_mm256_add_pd(m2_lo, m2_hi));
  for (std::size_t i = whole; i < n; ++i) {
    const float v = x[i];
    if ((std::bit_cast<std::uint32_t>(v) & 0x7f800000u) == 0x7f800000u) continue;
    const double d = static_cast<double>(v) - mean_value;
    s.m2 += d * d;
  }
  return s;
}

ResidualSums residual_sums_avx2(const float* x, const float* r, std::size_t n) noexcept {
  const std::size_t whole = n - n % 8;
  __m256d residual_lo = _mm256_setzero_pd(), residual_hi = _mm256_setzero_pd();
  __m256d delta_lo = _mm256_setzero_pd(), delta_hi = _mm256_setzero_pd();
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    const __m256 rv = _mm256_loadu_ps(r + i);
    const __m256d r_lo = low_half(rv), r_hi = high_half(rv);
    const __m256d d_lo = _mm256_sub_pd(low_half(xv), r_lo), d_hi = _mm256_sub_pd(high_half(xv), r_hi);
    residual_lo = _mm256_fmadd_pd(r_lo, r_lo, residual_lo);
    residual_hi = _mm256_fmadd_pd(r_hi, r_hi, residual_hi);
    delta_lo = _mm256_fmadd_pd(d_lo, d_lo, delta_lo);
    delta_hi = _mm256_fmadd_pd(d_hi, d_hi, delta_hi);
  }
  const ResidualSums tail = residual_sums_scalar(x + whole, r + whole, n - whole);
  return {add_lanes(_mm256_add_pd(residual_lo, residual_hi)) + tail.residual,
          add_lanes(_mm256_add_pd(delta_lo, delta_hi)) + tail.delta};
}

}  // namespace brick::trace::kernels
