// fp32 -> bf16 with AVX2, 8 values per vector, in integer arithmetic: bits + 0x7FFF + (bit 16)
// shifted down by 16 rounds to nearest even; a NaN keeps its top half with the quiet bit set.
#include <cstring>

#include "core/simd_avx2.hpp"
#include "quant/kernels/bf16_rows.hpp"

namespace brick::quant::kernels {
namespace {

// The eight results as 16-bit values in the low halves of the dwords.
__m256i convert(__m256i bits) {
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)),
                       _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1))),
      16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)), _mm256_set1_epi32(0x7F800000));
  return _mm256_blendv_epi8(rounded, quiet_nan, nan);
}

void convert8(const float* in, std::uint16_t* out) {
  const __m256i halves = convert(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
  // packus keeps the low 16 bits (all results fit), per 128-bit lane.
  const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), packed);
}

}  // namespace

// The tail (n mod 8 values) goes through an 8-wide stack buffer, so no scalar helper compiled with
// these flags can leak into baseline code through the linker.
void fp32_to_bf16_avx2(const float* in, std::uint16_t* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) convert8(in + i, out + i);
  if (i < n) {
    float tail_in[8] = {};
    std::uint16_t tail_out[8];
    std::memcpy(tail_in, in + i, (n - i) * sizeof(float));
    convert8(tail_in, tail_out);
    std::memcpy(out + i, tail_out, (n - i) * sizeof(std::uint16_t));
  }
}

}  // namespace brick::quant::kernels
