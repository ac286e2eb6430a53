// fp32 -> bf16 with AVX-512 F/BW, 16 values per vector: the AVX2 kernel's integer rounding
// (bf16_rows_avx2.cpp), with masked loads and stores for the tail.
#include "core/simd_avx512.hpp"
#include "quant/kernels/bf16_rows.hpp"

namespace brick::quant::kernels {
namespace {

__m256i convert(__m512i bits) {
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)),
                       _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1))),
      16);
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
  const __m512i result =
      _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(result);
}

}  // namespace

void fp32_to_bf16_avx512(const float* in, std::uint16_t* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), convert(_mm512_loadu_si512(in + i)));
  }
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, mask, convert(_mm512_maskz_loadu_epi32(mask, in + i)));
  }
}

}  // namespace brick::quant::kernels
