// Q8_K quantization with AVX2, 8 values per vector: the AVX-512 kernel's steps
// (quantize_q8k_avx512.cpp) at half the width.
#include <bit>
#include <cstdint>
#include <cstring>

#include "core/simd_avx2.hpp"
#include "quant/kernels/quantize_q8k.hpp"

namespace brick::quant::kernels {
namespace {

// int32 quants of the scalar reference, 8 per vector, before the cast to int8.
__m256i quants(const float* x, __m256 scale) {
  const __m256 product = _mm256_mul_ps(scale, _mm256_loadu_ps(x));  // no FMA, see the AVX-512 kernel
  const __m256i bits = _mm256_castps_si256(_mm256_add_ps(product, _mm256_set1_ps(12582912.0f)));
  const __m256i rounded =
      _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x00400000));
  return _mm256_min_epi32(rounded, _mm256_set1_epi32(127));
}

void quantize_block(const float* x, BlockQ8K& block) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 amax8 = _mm256_setzero_ps();
  for (int i = 0; i < 32; ++i) amax8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * i), magnitude), amax8);
  const float amax = simd::horizontal_max(amax8);
  if (amax == 0.0f) {
    std::memset(&block, 0, sizeof(block));
    return;
  }
  float max = 0;
  for (int i = 0; i < 32; ++i) {
    const __m256 v = _mm256_loadu_ps(x + 8 * i);
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(v, magnitude), _mm256_set1_ps(amax), _CMP_EQ_OQ));
    if (hit != 0) {
      max = x[8 * i + std::countr_zero(static_cast<unsigned>(hit))];
      break;
    }
  }
  const float iscale = -127.f / max;
  const __m256 scale = _mm256_set1_ps(iscale);
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  // After the two packs the dwords of 32 bytes are in the order a0 b0 c0 d0 a1 b1 c1 d1.
  const __m256i in_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  alignas(32) std::uint64_t halves[32];  // sums of 8 quants + 8 * 128, two per group of 16
  for (int chunk = 0; chunk < 8; ++chunk) {
    const float* xc = x + 32 * chunk;
    // The low byte of each quant, unsigned, so that the packs cannot saturate: a truncating cast.
    const __m256i a = _mm256_and_si256(quants(xc, scale), low_byte);
    const __m256i b = _mm256_and_si256(quants(xc + 8, scale), low_byte);
    const __m256i c = _mm256_and_si256(quants(xc + 16, scale), low_byte);
    const __m256i d = _mm256_and_si256(quants(xc + 24, scale), low_byte);
    const __m256i bytes = _mm256_permutevar8x32_epi32(
        _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d)), in_order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(block.qs + 32 * chunk), bytes);
    _mm256_store_si256(reinterpret_cast<__m256i*>(halves + 4 * chunk),
                       _mm256_sad_epu8(_mm256_xor_si256(bytes, _mm256_set1_epi8(static_cast<char>(0x80))),
                                       _mm256_setzero_si256()));
  }
  for (int g = 0; g < 16; ++g) {
    block.bsums[g] = static_cast<std::int16_t>(static_cast<int>(halves[2 * g] + halves[2 * g + 1]) - 16 * 128);
  }
  block.d = 1 / iscale;
}

}  // namespace

void quantize_q8k_avx2(const float* x, BlockQ8K* out, std::size_t blocks) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) quantize_block(x + b * kBlockSize, out[b]);
}

}  // namespace brick::quant::kernels
