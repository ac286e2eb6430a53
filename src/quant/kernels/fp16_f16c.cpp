#include "quant/kernels/fp16_f16c.hpp"

#include <immintrin.h>

#include <cstring>

namespace brick::quant::kernels {

// The tail (n mod 8 values) goes through an 8-wide stack buffer, so no scalar helper compiled with
// these flags can leak into baseline code through the linker.
void fp16_to_fp32_f16c(const std::uint16_t* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(half));
  }
  if (i < n) {
    std::uint16_t half[8] = {};
    float single[8];
    std::memcpy(half, in + i, (n - i) * sizeof(std::uint16_t));
    _mm256_storeu_ps(single,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half))));
    std::memcpy(out + i, single, (n - i) * sizeof(float));
  }
}

void fp32_to_fp16_f16c(const float* in, std::uint16_t* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
  }
  if (i < n) {
    float single[8] = {};
    std::uint16_t half[8];
    std::memcpy(single, in + i, (n - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(half),
                     _mm256_cvtps_ph(_mm256_loadu_ps(single), _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(out + i, half, (n - i) * sizeof(std::uint16_t));
  }
}

}  // namespace brick::quant::kernels
