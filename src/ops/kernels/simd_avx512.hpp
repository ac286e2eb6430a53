#pragma once
// Helpers shared by the AVX-512 float kernels; include only from *_avx512.cpp translation units.
// Everything here has internal linkage, so no AVX-512 code can leak into baseline code.
// GCC 12 reports the deliberately undefined pass-through operands of its own AVX-512 intrinsics as
// uninitialised at -O3; the warning is about the header, not this code. (Clang has no such warning
// and would reject the unknown option, hence the guard.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

namespace brick::ops::kernels {
namespace {

constexpr std::size_t kLanes512 = 16;

// The first `remaining` (<= 16) lanes.
inline __mmask16 tail_mask16(std::size_t remaining) noexcept {
  return static_cast<__mmask16>((1u << remaining) - 1u);
}

// Returns v unchanged through an empty asm statement the compiler cannot see into. A product
// passed through it cannot be fused with a later add into an FMA (GCC contracts mul+add under its
// GNU-mode default -ffp-contract=fast), so the result is rounded exactly like the scalar reference.
inline __m512 rounded(__m512 v) noexcept {
  __asm__("" : "+v"(v));
  return v;
}

// Adds the 16 float lanes as doubles into two 8-lane double accumulators.
inline void accumulate_as_double(__m512 v, __m512d& low, __m512d& high) noexcept {
  low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

// exp(x) for 16 lanes, Cephes' expf scheme: x = n*ln2 + r with |r| <= ln2/2 (ln2 split in two so
// n*ln2 is exact), e^r from a degree-7 polynomial, and 2^n applied by vscalefps, which rounds
// results in the denormal range once, like libm, instead of flushing them. Inputs are clamped to
// [-110, 89], beyond which the true result rounds to 0 or overflows to inf; -inf gives exactly 0,
// +inf gives inf, NaN stays NaN. Max error against a correctly rounded exp: 2 ulp for normal
// results, one denormal step below (tests/ops/exp_f32_test.cpp checks the whole range).
inline __m512 exp_f32x16(__m512 x) noexcept {
  // max/min return their second operand when either is NaN: NaN goes through untouched.
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-110.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);

  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

}  // namespace
}  // namespace brick::ops::kernels
