// The baseline (SSE2) peaks: what the compiler makes of plain loops, for CPUs without AVX2.
#include <emmintrin.h>

#include "graph/kernels/peak_kernels.hpp"

namespace brick::graph::kernels {

double fma_rounds_scalar(std::uint64_t rounds, float& seed) noexcept {
  constexpr int kChains = 8;
  __m128 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(seed + static_cast<float>(c));
  const __m128 scale = _mm_set1_ps(0.999999f), shift = _mm_set1_ps(1e-7f);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], scale), shift);
  }
  __m128 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm_add_ps(total, acc[c]);
  seed = _mm_cvtss_f32(total);
  return 2.0 * 4.0 * kChains * static_cast<double>(rounds);
}

std::uint64_t read_sum_scalar(const std::byte* data, std::size_t bytes) noexcept {
  const auto* p = reinterpret_cast<const __m128i*>(data);
  const std::size_t per_stream = bytes / sizeof(__m128i) / 4;
  __m128i acc[4] = {};
  for (std::size_t i = 0; i < per_stream; ++i) {
    for (std::size_t s = 0; s < 4; ++s) acc[s] = _mm_add_epi64(acc[s], _mm_load_si128(p + s * per_stream + i));
  }
  const __m128i total = _mm_add_epi64(_mm_add_epi64(acc[0], acc[1]), _mm_add_epi64(acc[2], acc[3]));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(total) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total)));
}

}  // namespace brick::graph::kernels
