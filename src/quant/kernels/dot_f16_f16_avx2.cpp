// F16·F16 with AVX2 + F16C: eight halves per vcvtph2ps on each side, one FMA per eight products
// (exact in float), four accumulators so that the FMA chains overlap.
#include <cstring>

#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

inline __m256 widen(const fp16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

}  // namespace

float dot_f16_f16_avx2(const fp16_t* w, const fp16_t* x, std::size_t n) noexcept {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (std::size_t v = 0; v < 4; ++v) acc[v] = _mm256_fmadd_ps(widen(w + i + 8 * v), widen(x + i + 8 * v), acc[v]);
  }
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(widen(w + i), widen(x + i), acc[0]);
  if (i < n) {  // through zeroed 8-wide buffers: nothing past the rows is read
    fp16_t w_tail[8] = {};
    fp16_t x_tail[8] = {};
    std::memcpy(w_tail, w + i, (n - i) * sizeof(fp16_t));
    std::memcpy(x_tail, x + i, (n - i) * sizeof(fp16_t));
    acc[1] = _mm256_fmadd_ps(widen(w_tail), widen(x_tail), acc[1]);
  }
  return simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

}  // namespace brick::quant::kernels
