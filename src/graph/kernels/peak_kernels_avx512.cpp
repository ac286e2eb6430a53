#include <immintrin.h>

#include "graph/kernels/peak_kernels.hpp"

namespace brick::graph::kernels {

double fma_rounds_avx512(std::uint64_t rounds, float& seed) noexcept {
  constexpr int kChains = 12;
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  seed = lanes[0];
  return 2.0 * 16.0 * kChains * static_cast<double>(rounds);
}

}  // namespace brick::graph::kernels
