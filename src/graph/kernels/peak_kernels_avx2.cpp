#include <immintrin.h>

#include "graph/kernels/peak_kernels.hpp"

namespace brick::graph::kernels {

// Twelve chains cover the FMA latency (4-5 cycles) times two FMA ports on current cores.
double fma_rounds_avx2(std::uint64_t rounds, float& seed) noexcept {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  }
  __m256 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm256_add_ps(total, acc[c]);
  seed = _mm256_cvtss_f32(total);
  return 2.0 * 8.0 * kChains * static_cast<double>(rounds);
}

std::uint64_t read_sum_avx2(const std::byte* data, std::size_t bytes) noexcept {
  const auto* p = reinterpret_cast<const __m256i*>(data);
  const std::size_t per_stream = bytes / sizeof(__m256i) / 4;
  __m256i acc[4] = {};
  for (std::size_t i = 0; i < per_stream; ++i) {
    for (std::size_t s = 0; s < 4; ++s) acc[s] = _mm256_add_epi64(acc[s], _mm256_load_si256(p + s * per_stream + i));
  }
  const __m256i total = _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3]));
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace brick::graph::kernels
