#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

// Both layouts compute a*cos - b*sin and a*sin + b*cos with separately rounded products (no FMA),
// exactly as the scalar reference rounds them, so the backends agree bit for bit. Full vectors use
// plain loads and stores; only the tail is masked (AMD executes masked stores slowly).
namespace brick::ops::kernels {
namespace {

// Four adjacent pairs (x0, x1) rotated by four angles: lanes 2j and 2j+1 take pair j's cos and
// sin, and the even lane (the pair's first element) subtracts.
inline __m256 rotate_adjacent_pairs(__m256 v, __m128 cos4, __m128 sin4) noexcept {
  const __m256i duplicate = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 negate_even = _mm256_castsi256_ps(_mm256_set1_epi64x(0x0000000080000000LL));
  const __m256 c = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(cos4), duplicate);
  const __m256 s =
      _mm256_xor_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(sin4), duplicate), negate_even);
  const __m256 swapped = _mm256_permute_ps(v, 0xB1);
  return _mm256_add_ps(_mm256_mul_ps(v, c), _mm256_mul_ps(swapped, s));
}

// NeoX pairs (a, b) from two vectors: a*cos - b*sin and a*sin + b*cos.
inline __m256 rotated_first(__m256 a, __m256 b, __m256 c, __m256 s) noexcept {
  return _mm256_sub_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(b, s));
}
inline __m256 rotated_second(__m256 a, __m256 b, __m256 c, __m256 s) noexcept {
  return _mm256_add_ps(_mm256_mul_ps(a, s), _mm256_mul_ps(b, c));
}

}  // namespace

void rope_norm_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept {
  constexpr std::size_t kPairsPerStep = kLanes256 / 2;
  std::size_t k = 0;
  for (; k + kPairsPerStep <= n_pairs; k += kPairsPerStep) {
    const __m128 c = _mm_loadu_ps(cos + k);
    const __m128 s = _mm_loadu_ps(sin + k);
    const std::size_t offset = 2 * (first_pair + k);
    for (std::size_t h = 0; h < n_heads; ++h) {
      const __m256 v = _mm256_loadu_ps(x + h * head_dim + offset);
      _mm256_storeu_ps(out + h * head_dim + offset, rotate_adjacent_pairs(v, c, s));
    }
  }
  if (k < n_pairs) {
    const std::size_t pairs = n_pairs - k;
    const __m128i pair_mask = _mm256_castsi256_si128(tail_mask8(pairs));
    const __m256i mask = tail_mask8(2 * pairs);
    const __m128 c = _mm_maskload_ps(cos + k, pair_mask);
    const __m128 s = _mm_maskload_ps(sin + k, pair_mask);
    const std::size_t offset = 2 * (first_pair + k);
    for (std::size_t h = 0; h < n_heads; ++h) {
      const __m256 v = _mm256_maskload_ps(x + h * head_dim + offset, mask);
      _mm256_maskstore_ps(out + h * head_dim + offset, mask, rotate_adjacent_pairs(v, c, s));
    }
  }
}

void rope_neox_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept {
  const std::size_t half = head_dim / 2;
  std::size_t k = 0;
  for (; k + kLanes256 <= n_pairs; k += kLanes256) {
    const __m256 c = _mm256_loadu_ps(cos + k);
    const __m256 s = _mm256_loadu_ps(sin + k);
    const std::size_t offset = first_pair + k;
    for (std::size_t h = 0; h < n_heads; ++h) {
      const float* head = x + h * head_dim + offset;
      float* head_out = out + h * head_dim + offset;
      const __m256 a = _mm256_loadu_ps(head);
      const __m256 b = _mm256_loadu_ps(head + half);
      _mm256_storeu_ps(head_out, rotated_first(a, b, c, s));
      _mm256_storeu_ps(head_out + half, rotated_second(a, b, c, s));
    }
  }
  if (k < n_pairs) {
    const __m256i mask = tail_mask8(n_pairs - k);
    const __m256 c = _mm256_maskload_ps(cos + k, mask);
    const __m256 s = _mm256_maskload_ps(sin + k, mask);
    const std::size_t offset = first_pair + k;
    for (std::size_t h = 0; h < n_heads; ++h) {
      const float* head = x + h * head_dim + offset;
      float* head_out = out + h * head_dim + offset;
      const __m256 a = _mm256_maskload_ps(head, mask);
      const __m256 b = _mm256_maskload_ps(head + half, mask);
      _mm256_maskstore_ps(head_out, mask, rotated_first(a, b, c, s));
      _mm256_maskstore_ps(head_out + half, mask, rotated_second(a, b, c, s));
    }
  }
}

}  // namespace brick::ops::kernels
