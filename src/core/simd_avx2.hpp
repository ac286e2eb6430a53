#pragma once
// AVX2 basics shared by the kernels of every room; include only from *_avx2.cpp translation units.
// Everything here has internal linkage, so no AVX2 code can leak into baseline code.
#include <immintrin.h>

namespace brick::simd {
namespace {

inline float horizontal_sum(__m256 v) noexcept {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline double horizontal_sum(__m256d v) noexcept {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

inline float horizontal_max(__m256 v) noexcept {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace
}  // namespace brick::simd
