// Q8_0·Q8_0 with AVX2: each block's 32 products summed exactly in eight int32 lanes (both operands
// widened to int16 for _mm256_madd_epi16: the unsigned-times-signed _mm256_maddubs_epi16 would need
// |w| and a sign-flipped x, which is wrong for -128), converted to float and accumulated with the
// block's scale d_w * d_x by one FMA.
#include <cstdint>

#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

inline __m256i block_sum(const BlockQ80& w, const BlockQ80& x) {
  const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs));
  const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
  const __m256i low = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(wq)),
                                        _mm256_cvtepi8_epi16(_mm256_castsi256_si128(xq)));
  const __m256i high = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(wq, 1)),
                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(xq, 1)));
  return _mm256_add_epi32(low, high);
}

inline __m256 block_scale(const BlockQ80& w, const BlockQ80& x) { return _mm256_set1_ps(_cvtsh_ss(w.d) * _cvtsh_ss(x.d)); }

}  // namespace

float dot_q8_0_q8_0_avx2(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  // Two accumulators: the FMA chain is half as long.
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (std::size_t b = 0; b < blocks; ++b) {
    acc[b % 2] = _mm256_fmadd_ps(block_scale(w[b], x[b]), _mm256_cvtepi32_ps(block_sum(w[b], x[b])), acc[b % 2]);
  }
  return simd::horizontal_sum(_mm256_add_ps(acc[0], acc[1]));
}

}  // namespace brick::quant::kernels
