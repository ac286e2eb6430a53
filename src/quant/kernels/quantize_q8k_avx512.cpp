// Q8_K quantization with AVX-512 F/BW, 16 values per vector. Every step is the scalar reference's
// (q8k.cpp) on 16 lanes: the product iscale * x rounded to float, then rounded to an integer by
// adding 1.5 * 2^23 and reading the low mantissa bits (ggml's nearest_int, whose garbage for
// non-finite products this reproduces too), clamped above at 127 and truncated to int8.
#include <bit>
#include <cstdint>
#include <cstring>

#include "core/simd_avx512.hpp"
#include "quant/kernels/quantize_q8k.hpp"

namespace brick::quant::kernels {
namespace {

void quantize_block(const float* x, BlockQ8K& block) {
  const __m512 magnitude = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  // max(|x|, amax) keeps amax when |x| is NaN, as the reference's `|x| > amax` does.
  __m512 amax16 = _mm512_setzero_ps();
  for (int g = 0; g < 16; ++g) amax16 = _mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(x + 16 * g), magnitude), amax16);
  const float amax = _mm512_reduce_max_ps(amax16);
  if (amax == 0.0f) {
    std::memset(&block, 0, sizeof(block));
    return;
  }
  // The first value of the largest magnitude, with its sign.
  float max = 0;
  for (int g = 0; g < 16; ++g) {
    const __m512 v = _mm512_loadu_ps(x + 16 * g);
    const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_and_ps(v, magnitude), _mm512_set1_ps(amax), _CMP_EQ_OQ);
    if (hit != 0) {
      max = x[16 * g + std::countr_zero(static_cast<unsigned>(hit))];
      break;
    }
  }
  const float iscale = -127.f / max;
  const __m512 scale = _mm512_set1_ps(iscale);
  // The 16 quants of group g, as int8.
  const auto group = [&](int g) {
    // The product rounded on its own, as ggml's reference (built without FMA) rounds it.
    const __m512 product = _mm512_mul_ps(scale, _mm512_loadu_ps(x + 16 * g));
    const __m512i bits = _mm512_castps_si512(_mm512_add_ps(product, _mm512_set1_ps(12582912.0f)));
    const __m512i rounded =
        _mm512_sub_epi32(_mm512_and_si512(bits, _mm512_set1_epi32(0x007FFFFF)), _mm512_set1_epi32(0x00400000));
    return _mm512_cvtepi32_epi8(_mm512_min_epi32(rounded, _mm512_set1_epi32(127)));
  };
  // Per group of 16 quants, their sum + 16 * 128 in two qwords (the sums of 8 quants + 8 * 128 each):
  // psadbw adds unsigned bytes, and q ^ 0x80 is q + 128 as an unsigned byte.
  __m512i halves[4];
  for (int quad = 0; quad < 4; ++quad) {
    const int g = 4 * quad;
    const __m512i quants = _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(group(g)), group(g + 1), 1), group(g + 2), 2),
        group(g + 3), 3);
    _mm512_storeu_si512(block.qs + 64 * quad, quants);
    halves[quad] = _mm512_sad_epu8(_mm512_xor_si512(quants, _mm512_set1_epi8(static_cast<char>(0x80))),
                                   _mm512_setzero_si512());
  }
  // Qwords 2k and 2k + 1 of halves[v] are group 4v + k's.
  const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i groups_0_7 = _mm512_add_epi64(_mm512_permutex2var_epi64(halves[0], even, halves[1]),
                                              _mm512_permutex2var_epi64(halves[0], odd, halves[1]));
  const __m512i groups_8_15 = _mm512_add_epi64(_mm512_permutex2var_epi64(halves[2], even, halves[3]),
                                               _mm512_permutex2var_epi64(halves[2], odd, halves[3]));
  const __m256i sums = _mm256_sub_epi16(
      _mm256_set_m128i(_mm512_cvtepi64_epi16(groups_8_15), _mm512_cvtepi64_epi16(groups_0_7)),
      _mm256_set1_epi16(16 * 128));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block.bsums), sums);
  block.d = 1 / iscale;
}

}  // namespace

void quantize_q8k_avx512(const float* x, BlockQ8K* out, std::size_t blocks) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) quantize_block(x + b * kBlockSize, out[b]);
}

}  // namespace brick::quant::kernels
