// Q8_0 activation quantization with AVX-512 F/BW, two blocks of 32 values at a time: block b in the
// low 256 bits of four zmm (values 8k..8k+7 in vector k), block b + 1 in the high 256 bits, so that
// every step is the AVX2 kernel's on each half (see quantize_q8_0_avx2.cpp and the scalar reference
// in q8_0.cpp): the same lanes meet in the same order in the maxps reductions, which decides where a
// NaN survives.
#include <cstdint>
#include <cstring>

#include "core/simd_avx512.hpp"
#include "quant/kernels/quantize_q8_0.hpp"

namespace brick::quant::kernels {
namespace {

// `first` and `second` (the same block when there is one left) quantized; only `first` is written
// when `second_out` is null.
void quantize_pair(const float* first, const float* second, BlockQ80& first_out, BlockQ80* second_out) {
  const __m512 magnitude = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  __m512 v[4];
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(first + 8 * k)), _mm256_loadu_ps(second + 8 * k), 1);
  }
  __m512 lanes = _mm512_and_ps(v[0], magnitude);
  for (int k = 1; k < 4; ++k) lanes = _mm512_max_ps(lanes, _mm512_and_ps(v[k], magnitude));
  // Per half: the high 128 bits against the low ones, then lanes 2-3 against 0-1, then 1 against 0.
  const __m512 four = _mm512_max_ps(_mm512_shuffle_f32x4(lanes, lanes, _MM_SHUFFLE(3, 3, 1, 1)), lanes);
  const __m512 two = _mm512_max_ps(four, _mm512_permute_ps(four, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 one = _mm512_max_ps(two, _mm512_movehdup_ps(two));
  // Lane 0 holds the first block's amax, lane 8 the second's; spread each over its half.
  const __m512 amax = _mm512_permutexvar_ps(_mm512_set_epi32(8, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0), one);
  const __m512 d = _mm512_div_ps(amax, _mm512_set1_ps(127.f));
  // F16C's rounding, every NaN the quiet 0x7E00 (d is never negative).
  const __m256i d_bits = _mm256_mask_set1_epi16(_mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT),
                                                _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), 0x7E00);
  const __mmask16 nonzero = _mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  const __m512 scale = _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(127.f), amax);
  __m128i bytes[4];
  for (int k = 0; k < 4; ++k) {
    const __m512 rounded = _mm512_roundscale_ps(_mm512_mul_ps(v[k], scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // NaN and out-of-range values become INT32_MIN, which saturates to -128.
    bytes[k] = _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(rounded));
  }
  // bytes[k] holds values 8k..8k+7 of the first block, then of the second.
  const __m256i first_quants = _mm256_set_m128i(_mm_unpacklo_epi64(bytes[2], bytes[3]), _mm_unpacklo_epi64(bytes[0], bytes[1]));
  first_out.d = static_cast<std::uint16_t>(_mm256_extract_epi16(d_bits, 0));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(first_out.qs), first_quants);
  if (second_out != nullptr) {
    const __m256i second_quants =
        _mm256_set_m128i(_mm_unpackhi_epi64(bytes[2], bytes[3]), _mm_unpackhi_epi64(bytes[0], bytes[1]));
    second_out->d = static_cast<std::uint16_t>(_mm256_extract_epi16(d_bits, 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(second_out->qs), second_quants);
  }
}

}  // namespace

void quantize_q8_0_activation_avx512(const float* x, BlockQ80* out, std::size_t blocks) noexcept {
  std::size_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    quantize_pair(x + b * kQ80BlockSize, x + (b + 1) * kQ80BlockSize, out[b], &out[b + 1]);
  }
  if (b < blocks) quantize_pair(x + b * kQ80BlockSize, x + b * kQ80BlockSize, out[b], nullptr);
}

}  // namespace brick::quant::kernels
