#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

// Both layouts compute a*cos - b*sin and a*sin + b*cos with separately rounded products (no FMA),
// exactly as the scalar reference rounds them, so the backends agree bit for bit.
namespace brick::ops::kernels {
namespace {

// NeoX pairs (a, b) from two vectors: a*cos - b*sin and a*sin + b*cos.
inline __m512 rotated_first(__m512 a, __m512 b, __m512 c, __m512 s) noexcept {
  return _mm512_sub_ps(_mm512_mul_ps(a, c), _mm512_mul_ps(b, s));
}
inline __m512 rotated_second(__m512 a, __m512 b, __m512 c, __m512 s) noexcept {
  return _mm512_add_ps(_mm512_mul_ps(a, s), _mm512_mul_ps(b, c));
}

}  // namespace

void rope_norm_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  constexpr std::size_t kPairsPerStep = kLanes512 / 2;
  // Lane 2j and 2j+1 both take pair j's angle; the even lane (the pair's first element) subtracts.
  const __m512i duplicate = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512 negate_even = _mm512_castsi512_ps(_mm512_set1_epi64(0x0000000080000000LL));
  for (std::size_t k = 0; k < n_pairs; k += kPairsPerStep) {
    const std::size_t pairs = n_pairs - k < kPairsPerStep ? n_pairs - k : kPairsPerStep;
    const __mmask8 pair_mask = static_cast<__mmask8>((1u << pairs) - 1u);
    const __mmask16 mask = tail_mask16(2 * pairs);
    const __m512 c = _mm512_permutexvar_ps(
        duplicate, _mm512_castps256_ps512(_mm256_maskz_loadu_ps(pair_mask, cos + k)));
    const __m512 s = _mm512_xor_ps(
        _mm512_permutexvar_ps(duplicate,
                              _mm512_castps256_ps512(_mm256_maskz_loadu_ps(pair_mask, sin + k))),
        negate_even);
    const std::size_t offset = 2 * (first_pair + k);
    for (std::size_t h = 0; h < n_heads; ++h) {
      const __m512 v = _mm512_maskz_loadu_ps(mask, x + h * head_dim + offset);
      const __m512 swapped = _mm512_permute_ps(v, 0xB1);
      const __m512 rotated =
          _mm512_add_ps(_mm512_mul_ps(v, c), _mm512_mul_ps(swapped, s));
      _mm512_mask_storeu_ps(out + h * head_dim + offset, mask, rotated);
    }
  }
}

void rope_neox_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  const std::size_t half = head_dim / 2;
  for (std::size_t k = 0; k < n_pairs; k += kLanes512) {
    const __mmask16 mask = n_pairs - k < kLanes512 ? tail_mask16(n_pairs - k) : __mmask16{0xFFFF};
    const __m512 c = _mm512_maskz_loadu_ps(mask, cos + k);
    const __m512 s = _mm512_maskz_loadu_ps(mask, sin + k);
    const std::size_t offset = first_pair + k;
    for (std::size_t h = 0; h < n_heads; ++h) {
      const float* head = x + h * head_dim;
      float* head_out = out + h * head_dim;
      const __m512 a = _mm512_maskz_loadu_ps(mask, head + offset);
      const __m512 b = _mm512_maskz_loadu_ps(mask, head + offset + half);
      _mm512_mask_storeu_ps(head_out + offset, mask, rotated_first(a, b, c, s));
      _mm512_mask_storeu_ps(head_out + offset + half, mask, rotated_second(a, b, c, s));
    }
  }
}

}  // namespace brick::ops::kernels
