// Q8_0 activation quantization with AVX2, one block of 32 values at a time: the steps of the scalar
// reference (q8_0.cpp), which are those of ggml-cpu's x86 quantize_row_q8_0.
#include <cstdint>
#include <cstring>

#include "core/simd_avx2.hpp"
#include "quant/kernels/quantize_q8_0.hpp"

namespace brick::quant::kernels {
namespace {

// The fp16 bits of a block scale as ggml writes them: F16C's rounding, every NaN the quiet 0x7E00
// (d is never negative).
std::uint16_t scale_bits(float d) {
  if (d != d) return 0x7E00;
  return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(d), _MM_FROUND_TO_NEAREST_INT), 0));
}

void quantize_block(const float* x, BlockQ80& out) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 v[4];
  for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(x + 8 * k);
  // The lanes' maxima in the reference's order; maxps keeps its second operand unless the first is
  // greater, which decides where a NaN survives.
  __m256 lanes = _mm256_and_ps(v[0], magnitude);
  for (int k = 1; k < 4; ++k) lanes = _mm256_max_ps(lanes, _mm256_and_ps(v[k], magnitude));
  __m128 four = _mm_max_ps(_mm256_extractf128_ps(lanes, 1), _mm256_castps256_ps128(lanes));
  four = _mm_max_ps(four, _mm_movehl_ps(four, four));
  const float amax = _mm_cvtss_f32(_mm_max_ss(four, _mm_movehdup_ps(four)));
  out.d = scale_bits(amax / 127.f);
  const __m256 scale = _mm256_set1_ps(amax != 0.0f ? 127.f / amax : 0.0f);
  __m256i quants[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 rounded = _mm256_round_ps(_mm256_mul_ps(v[k], scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    quants[k] = _mm256_cvtps_epi32(rounded);  // NaN and out-of-range values become INT32_MIN
  }
  // Saturating packs to int8. They work per 128-bit lane: the dwords (four quants each) come out as
  // the low halves of quants 0-3, then their high halves.
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(quants[0], quants[1]), _mm256_packs_epi32(quants[2], quants[3]));
  const __m256i in_order = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.qs), in_order);
}

}  // namespace

void quantize_q8_0_activation_avx2(const float* x, BlockQ80* out, std::size_t blocks) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) quantize_block(x + b * kQ80BlockSize, out[b]);
}

}  // namespace brick::quant::kernels
