#pragma once
// Helpers shared by the AVX-512 float kernels; include only from *_avx512.cpp translation units.
// Everything here has internal linkage, so no AVX-512 code can leak into baseline code.
#include "core/simd_avx512.hpp"

#include <cstddef>
#include <cstdint>

namespace brick::ops::kernels {
namespace {

constexpr std::size_t kLanes512 = 16;

// The first `remaining` (<= 16) lanes.
inline __mmask16 tail_mask16(std::size_t remaining) noexcept {
  return static_cast<__mmask16>((1u << remaining) - 1u);
}

// Adds the 16 float lanes as doubles into two 8-lane double accumulators.
inline void accumulate_as_double(__m512 v, __m512d& low, __m512d& high) noexcept {
  low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

// exp(x) for 16 lanes, or exp(-x) when kNegate (the negation folded into the range reduction).
// x = n*ln2 + r with |r| <= ln2/2 (ln2 split as in Cephes so that n*ln2 is exact), e^r from a
// degree-6 polynomial, and 2^n applied by vscalefps, which rounds results in the denormal range
// once, like libm, instead of flushing them. The argument is clamped to [-110, 89], beyond which
// the true result rounds to 0 or overflows to inf; -inf gives exactly 0, +inf gives inf, NaN stays
// NaN. Error against a correctly rounded exp: 1 ulp measured on every 61st float of the range,
// at most 2 ulp claimed and tested for normal results, one denormal step below
// (tests/ops/exp_f32_test.cpp).
template <bool kNegate = false>
inline __m512 exp_f32x16(__m512 x) noexcept {
  constexpr float kLow = kNegate ? -89.0f : -110.0f;
  constexpr float kHigh = kNegate ? 110.0f : 89.0f;
  constexpr float kLog2e = kNegate ? -1.44269504088896341f : 1.44269504088896341f;
  // max/min return their second operand when either is NaN: NaN goes through untouched.
  x = _mm512_min_ps(_mm512_set1_ps(kHigh), _mm512_max_ps(_mm512_set1_ps(kLow), x));
  // n = round(+-x / ln2): adding 1.5 * 2^23 inside the FMA leaves no fraction bits to round into.
  const __m512 shifter = _mm512_set1_ps(0x1.8p23f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), shifter), shifter);
  // r = +-x - n * ln2, the high part of ln2 first: n * 0.693359375 is exact.
  __m512 r = kNegate ? _mm512_fnmsub_ps(n, _mm512_set1_ps(0.693359375f), x)
                     : _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);

  // e^r: degree-6 minimax polynomial on [-ln2/2, ln2/2] (relative error 1.9e-9 before rounding,
  // 1.7e-8 with the coefficients rounded to float; fitted for Brick by the Remez algorithm).
  __m512 p = _mm512_set1_ps(0x1.6ab928p-10f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.126d64p-7f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.55589cp-5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.55540ap-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.fffffap-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

}  // namespace
}  // namespace brick::ops::kernels
