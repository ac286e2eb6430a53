#pragma once
// AVX2 basics shared by the kernels of every room; include only from *_avx2.cpp translation units.
// Everything here has internal linkage, so no AVX2 code can leak into baseline code.
#include <immintrin.h>

#include <cstdint>

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

// Four fp16 values from anywhere in memory as floats (needs F16C): packed in a general register
// and converted by one vcvtph2ps, where inserting them into a vector takes a shuffle each.
inline __m128 fp16x4_to_f32(std::uint16_t a, std::uint16_t b, std::uint16_t c, std::uint16_t d) noexcept {
  const std::uint64_t bits = a | std::uint64_t{b} << 16 | std::uint64_t{c} << 32 | std::uint64_t{d} << 48;
  return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(bits)));
}

inline float horizontal_max(__m256 v) noexcept {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace
}  // namespace brick::simd
