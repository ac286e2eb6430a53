#pragma once
// F32x16, the AVX-512 vector of the float-op bodies (an F32Vector, f32_vector.hpp), and its exp;
// include only from *_avx512.cpp translation units. Everything here has internal linkage, so no
// AVX-512 code can leak into baseline code.
#include <cstddef>
#include <cstdint>

#include "core/simd_avx512.hpp"
#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

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

// Sixteen floats in a zmm register; a tail is a lane mask.
struct F32x16 {
  using Vec = __m512;
  using Doubles = __m512d;  // half a Vec's lanes as doubles
  using Mask = __mmask16;
  static constexpr std::size_t kLanes = 16;

  static Vec zero() noexcept { return _mm512_setzero_ps(); }
  static Vec set1(float v) noexcept { return _mm512_set1_ps(v); }
  static Vec load(const float* p) noexcept { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) noexcept { _mm512_storeu_ps(p, v); }

  // The first n (<= 16) lanes.
  static Mask first(std::size_t n) noexcept { return static_cast<__mmask16>((1u << n) - 1u); }
  static Vec load(Mask m, const float* p) noexcept { return _mm512_maskz_loadu_ps(m, p); }
  // Masked-off lanes take `fill`.
  static Vec load_or(Mask m, const float* p, Vec fill) noexcept {
    return _mm512_mask_loadu_ps(fill, m, p);
  }
  static void store(Mask m, float* p, Vec v) noexcept { _mm512_mask_storeu_ps(p, m, v); }
  // Masked-off lanes zero.
  static Vec keep(Mask m, Vec v) noexcept { return _mm512_maskz_mov_ps(m, v); }

  static Vec add(Vec a, Vec b) noexcept { return _mm512_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm512_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm512_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm512_div_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) noexcept { return _mm512_fmadd_ps(a, b, c); }
  // b when either is NaN.
  static Vec max(Vec a, Vec b) noexcept { return _mm512_max_ps(a, b); }
  template <bool kNegate = false>
  static Vec exp(Vec x) noexcept {
    return exp_f32x16<kNegate>(x);
  }
  static float sum(Vec v) noexcept { return _mm512_reduce_add_ps(v); }
  static float largest(Vec v) noexcept { return _mm512_reduce_max_ps(v); }

  static Doubles zero_doubles() noexcept { return _mm512_setzero_pd(); }
  static Doubles add(Doubles a, Doubles b) noexcept { return _mm512_add_pd(a, b); }
  static double sum(Doubles v) noexcept { return _mm512_reduce_add_pd(v); }
  // Adds v's lanes as doubles, the low half into `low`, the high half into `high`.
  static void accumulate_as_double(Vec v, Doubles& low, Doubles& high) noexcept {
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
  }

  // Lanes 2j and 2j + 1 both p[j], j < 8; then the same of the first `pairs` (< 8), zero past them.
  static Vec pairs_of(const float* p) noexcept { return duplicate_pairs(_mm256_loadu_ps(p)); }
  static Vec pairs_of(std::size_t pairs, const float* p) noexcept {
    return duplicate_pairs(_mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << pairs) - 1u), p));
  }
  static Vec duplicate_pairs(__m256 half) noexcept {
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                                 _mm512_castps256_ps512(half));
  }
  // Lanes 2j and 2j + 1 swapped.
  static Vec swap_pairs(Vec v) noexcept { return _mm512_permute_ps(v, 0xB1); }
  // The even lanes negated.
  static Vec negate_even(Vec v) noexcept {
    return _mm512_xor_ps(v, _mm512_castsi512_ps(_mm512_set1_epi64(0x0000000080000000LL)));
  }
};

static_assert(F32Vector<F32x16>);

}  // namespace
}  // namespace brick::ops::kernels
