// fp16 <-> fp32 rows with AVX-512 F, 16 values per vcvtps2ph / vcvtph2ps and masked loads and
// stores for the tail: the F16C instructions' bits (fp16_f16c.cpp) at twice the width.
#include <cstdint>

#include "core/simd_avx512.hpp"
#include "quant/kernels/fp16_f16c.hpp"

namespace brick::quant::kernels {

void fp16_to_fp32_avx512(const std::uint16_t* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  }
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, mask, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, in + i)));
  }
}

void fp32_to_fp16_avx512(const float* in, std::uint16_t* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  }
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, mask, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(mask, in + i), _MM_FROUND_TO_NEAREST_INT));
  }
}

}  // namespace brick::quant::kernels
