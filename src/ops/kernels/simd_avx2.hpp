#pragma once
// F32x8, the AVX2 vector of the float-op bodies (an F32Vector, f32_vector.hpp), and its exp;
// include only from *_avx2.cpp translation units. Everything here has internal linkage, so no AVX2
// code can leak into baseline code.
#include <cstddef>
#include <cstdint>

#include "core/simd_avx2.hpp"
#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// exp(x) for 8 lanes, or exp(-x) when kNegate: the scheme, constants and error of exp_f32x16 in
// simd_avx512.hpp, with 2^n applied as two power-of-two factors (AVX2 has no vscalefps) so that
// denormal results are still rounded once.
template <bool kNegate = false>
inline __m256 exp_f32x8(__m256 x) noexcept {
  constexpr float kLow = kNegate ? -89.0f : -110.0f;
  constexpr float kHigh = kNegate ? 110.0f : 89.0f;
  constexpr float kLog2e = kNegate ? -1.44269504088896341f : 1.44269504088896341f;
  // max/min return their second operand when either is NaN: NaN goes through untouched.
  x = _mm256_min_ps(_mm256_set1_ps(kHigh), _mm256_max_ps(_mm256_set1_ps(kLow), x));
  // n = round(+-x / ln2): adding 1.5 * 2^23 inside the FMA leaves no fraction bits to round into.
  const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
  const __m256 shifted = _mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), shifter);
  const __m256 n = _mm256_sub_ps(shifted, shifter);
  // r = +-x - n * ln2, the high part of ln2 first: n * 0.693359375 is exact.
  __m256 r = kNegate ? _mm256_fnmsub_ps(n, _mm256_set1_ps(0.693359375f), x)
                     : _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);

  __m256 p = _mm256_set1_ps(0x1.6ab928p-10f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0x1.126d64p-7f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0x1.55589cp-5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0x1.55540ap-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0x1.fffffap-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));

  // 2^n as 2^(n/2) * 2^(n - n/2): both factors stay normal over the clamped range. n sits in the
  // low mantissa bits of `shifted`, so it is read as an integer without a conversion.
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_castps_si256(shifter));
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 scale1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 scale2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, scale1), scale2);
}

// Eight floats in a ymm register; a tail is a vector mask for vmaskmovps, which never touches the
// memory of masked-off lanes.
struct F32x8 {
  using Vec = __m256;
  using Doubles = __m256d;  // half a Vec's lanes as doubles
  using Mask = __m256i;
  static constexpr std::size_t kLanes = 8;

  static Vec zero() noexcept { return _mm256_setzero_ps(); }
  static Vec set1(float v) noexcept { return _mm256_set1_ps(v); }
  static Vec load(const float* p) noexcept { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) noexcept { _mm256_storeu_ps(p, v); }

  // The first n (<= 8) lanes.
  static Mask first(std::size_t n) noexcept {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec load(Mask m, const float* p) noexcept { return _mm256_maskload_ps(p, m); }
  // Masked-off lanes take `fill`.
  static Vec load_or(Mask m, const float* p, Vec fill) noexcept {
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store(Mask m, float* p, Vec v) noexcept { _mm256_maskstore_ps(p, m, v); }
  // Masked-off lanes zero.
  static Vec keep(Mask m, Vec v) noexcept { return _mm256_and_ps(v, _mm256_castsi256_ps(m)); }

  static Vec add(Vec a, Vec b) noexcept { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm256_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm256_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm256_div_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) noexcept { return _mm256_fmadd_ps(a, b, c); }
  // b when either is NaN.
  static Vec max(Vec a, Vec b) noexcept { return _mm256_max_ps(a, b); }
  template <bool kNegate = false>
  static Vec exp(Vec x) noexcept {
    return exp_f32x8<kNegate>(x);
  }
  static float sum(Vec v) noexcept { return simd::horizontal_sum(v); }
  static float largest(Vec v) noexcept { return simd::horizontal_max(v); }

  static Doubles zero_doubles() noexcept { return _mm256_setzero_pd(); }
  static Doubles add(Doubles a, Doubles b) noexcept { return _mm256_add_pd(a, b); }
  static double sum(Doubles v) noexcept { return simd::horizontal_sum(v); }
  // Adds v's lanes as doubles, the low half into `low`, the high half into `high`.
  static void accumulate_as_double(Vec v, Doubles& low, Doubles& high) noexcept {
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }

  // Lanes 2j and 2j + 1 both p[j], j < 4; then the same of the first `pairs` (< 4), zero past them.
  static Vec pairs_of(const float* p) noexcept { return duplicate_pairs(_mm_loadu_ps(p)); }
  static Vec pairs_of(std::size_t pairs, const float* p) noexcept {
    return duplicate_pairs(_mm_maskload_ps(p, _mm256_castsi256_si128(first(pairs))));
  }
  static Vec duplicate_pairs(__m128 half) noexcept {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(half),
                                    _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  }
  // Lanes 2j and 2j + 1 swapped.
  static Vec swap_pairs(Vec v) noexcept { return _mm256_permute_ps(v, 0xB1); }
  // The even lanes negated.
  static Vec negate_even(Vec v) noexcept {
    return _mm256_xor_ps(v, _mm256_castsi256_ps(_mm256_set1_epi64x(0x0000000080000000LL)));
  }
};

static_assert(F32Vector<F32x8>);

}  // namespace
}  // namespace brick::ops::kernels
