#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

// Both layouts compute a*cos - b*sin and a*sin + b*cos with separately rounded products (no FMA),
// exactly as the scalar reference rounds them, so the backends agree bit for bit.
namespace brick::ops::kernels {

void rope_norm_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept {
  constexpr std::size_t kPairsPerStep = kLanes256 / 2;
  // Lane 2j and 2j+1 both take pair j's angle; the even lane (the pair's first element) subtracts.
  const __m256i duplicate = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 negate_even = _mm256_castsi256_ps(_mm256_set1_epi64x(0x0000000080000000LL));
  for (std::size_t k = 0; k < n_pairs; k += kPairsPerStep) {
    const std::size_t pairs = n_pairs - k < kPairsPerStep ? n_pairs - k : kPairsPerStep;
    const __m128i pair_mask = _mm256_castsi256_si128(tail_mask8(pairs));
    const __m256i mask = tail_mask8(2 * pairs);
    const __m256 c = _mm256_permutevar8x32_ps(
        _mm256_castps128_ps256(_mm_maskload_ps(cos + k, pair_mask)), duplicate);
    const __m256 s =
        _mm256_xor_ps(_mm256_permutevar8x32_ps(
                          _mm256_castps128_ps256(_mm_maskload_ps(sin + k, pair_mask)), duplicate),
                      negate_even);
    const std::size_t offset = 2 * (first_pair + k);
    for (std::size_t h = 0; h < n_heads; ++h) {
      const __m256 v = _mm256_maskload_ps(x + h * head_dim + offset, mask);
      const __m256 swapped = _mm256_permute_ps(v, 0xB1);
      const __m256 rotated =
          _mm256_add_ps(rounded(_mm256_mul_ps(v, c)), rounded(_mm256_mul_ps(swapped, s)));
      _mm256_maskstore_ps(out + h * head_dim + offset, mask, rotated);
    }
  }
}

void rope_neox_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept {
  const std::size_t half = head_dim / 2;
  for (std::size_t k = 0; k < n_pairs; k += kLanes256) {
    const __m256i mask = tail_mask8(n_pairs - k < kLanes256 ? n_pairs - k : kLanes256);
    const __m256 c = _mm256_maskload_ps(cos + k, mask);
    const __m256 s = _mm256_maskload_ps(sin + k, mask);
    const std::size_t offset = first_pair + k;
    for (std::size_t h = 0; h < n_heads; ++h) {
      const float* head = x + h * head_dim;
      float* head_out = out + h * head_dim;
      const __m256 a = _mm256_maskload_ps(head + offset, mask);
      const __m256 b = _mm256_maskload_ps(head + offset + half, mask);
      const __m256 out_a =
          _mm256_sub_ps(rounded(_mm256_mul_ps(a, c)), rounded(_mm256_mul_ps(b, s)));
      const __m256 out_b =
          _mm256_add_ps(rounded(_mm256_mul_ps(a, s)), rounded(_mm256_mul_ps(b, c)));
      _mm256_maskstore_ps(head_out + offset, mask, out_a);
      _mm256_maskstore_ps(head_out + offset + half, mask, out_b);
    }
  }
}

}  // namespace brick::ops::kernels
