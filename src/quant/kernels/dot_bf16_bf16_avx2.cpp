// BF16·BF16 with AVX2: a bf16 is the top half of a float, so interleaving 16 of them with zeros
// (vpunpcklwd / vpunpckhwd) gives two vectors of eight floats, in an order that is the same for
// the weights and the activation; one FMA per eight products (exact in float), four accumulators.
#include <cstring>

#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

struct Widened {
  __m256 low;
  __m256 high;
};

inline Widened widen(const bf16_t* p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i zero = _mm256_setzero_si256();
  return {_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v)), _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v))};
}

inline void accumulate(const bf16_t* w, const bf16_t* x, __m256& first, __m256& second) {
  const Widened a = widen(w);
  const Widened b = widen(x);
  first = _mm256_fmadd_ps(a.low, b.low, first);
  second = _mm256_fmadd_ps(a.high, b.high, second);
}

}  // namespace

float dot_bf16_bf16_avx2(const bf16_t* w, const bf16_t* x, std::size_t n) noexcept {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    accumulate(w + i, x + i, acc[0], acc[1]);
    accumulate(w + i + 16, x + i + 16, acc[2], acc[3]);
  }
  for (; i + 16 <= n; i += 16) accumulate(w + i, x + i, acc[0], acc[1]);
  if (i < n) {  // through zeroed 16-wide buffers: nothing past the rows is read
    bf16_t w_tail[16] = {};
    bf16_t x_tail[16] = {};
    std::memcpy(w_tail, w + i, (n - i) * sizeof(bf16_t));
    std::memcpy(x_tail, x + i, (n - i) * sizeof(bf16_t));
    accumulate(w_tail, x_tail, acc[2], acc[3]);
  }
  return simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

}  // namespace brick::quant::kernels
