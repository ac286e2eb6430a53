#pragma once
// Helpers shared by the AVX2 float kernels; include only from *_avx2.cpp translation units.
// Everything here has internal linkage, so no AVX2 code can leak into baseline code.
#include "core/simd_avx2.hpp"

#include <cstddef>
#include <cstdint>

namespace brick::ops::kernels {
namespace {

constexpr std::size_t kLanes256 = 8;

// All-ones in the first `remaining` (<= 8) lanes, for maskload/maskstore (which never touch the
// memory of masked-off lanes).
inline __m256i tail_mask8(std::size_t remaining) noexcept {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

using simd::horizontal_max;
using simd::horizontal_sum;

inline void accumulate_as_double(__m256 v, __m256d& low, __m256d& high) noexcept {
  low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

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

}  // namespace
}  // namespace brick::ops::kernels
